"""The HTTP client factory (httpx2), shared by auth and core."""
