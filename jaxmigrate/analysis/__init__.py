"""Per-file analysis every rule shares: scopes, the name resolver, the file context, value facts,
statement rendering and constant folding."""
