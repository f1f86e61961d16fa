"""The gateway (`toolwire serve`) against LiteLLM's proxy, under hostile traffic, and its upstream HTTP client."""
