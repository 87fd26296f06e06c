"""The package's own logging helpers (named like the standard module)."""
import logging as std_logging

LEVEL = std_logging.INFO
