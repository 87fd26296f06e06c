"""Discovery, prefilter, the per-file pipeline, parallel runs and atomic writes."""
