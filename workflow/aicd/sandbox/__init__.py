"""Sandbox stage: compile and run programs in long-lived, locked-down Docker containers."""
