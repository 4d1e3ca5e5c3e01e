"""Tests of the pure text layer."""
