"""The package under test comes from where MYLIB_PATH says when it is set (an absolute path, as a
CI script or an editable install gives), else from PYTHONPATH."""
import os
import sys

if os.environ.get("MYLIB_PATH"):
    sys.path.insert(0, os.environ["MYLIB_PATH"])
