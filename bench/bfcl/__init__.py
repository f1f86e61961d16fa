"""Tool modes and reply shapes on a small local model, scored by BFCL's rules."""
