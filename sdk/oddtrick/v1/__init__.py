"""The oddtrick.v1 protocol: code generated from proto/oddtrick/v1."""
