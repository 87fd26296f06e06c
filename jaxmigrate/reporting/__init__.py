"""Output formats for findings and run summaries."""
