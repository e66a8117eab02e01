"""surrogates."""
