"""Mini projects the verifier's tests copy and run; never collected by this repository's suite."""

collect_ignore_glob = ["*"]
