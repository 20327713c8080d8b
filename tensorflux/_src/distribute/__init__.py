"""Distributed training that runs on external engines (Ray for parameter servers)."""
