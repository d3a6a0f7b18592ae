"""Serialization: object + active capabilities -> JSON-ready dict, for HTTP and webhooks alike."""
