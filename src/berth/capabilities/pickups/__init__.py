"""octo/pickups: hotel and meeting-point pickups per option, chosen at booking, listed for the driver."""
