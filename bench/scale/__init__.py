"""Many agent runs at once: `toolwire batch` locally and on Ray, and concurrent runs on one scripted server."""
