"""Outbound deliveries: fan-out of changes to webhooks, and the worker that sends them."""
