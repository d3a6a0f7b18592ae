"""Berth: an OCTO booking server for tour and activity suppliers."""

__version__ = "0.1.0"
