"""The command line's exit codes (only the command line chooses one)."""

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN = 3  # the pin set breaks the exporter: nothing could be measured
