"""toolwire against its peers on single operations (import, convert, stream, agent, text, cache) and alone."""
