"""Placeholder: replaced by the conformance suite."""
