"""Tests of orbmcp.host, the embedding API."""
