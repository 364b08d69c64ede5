"""Request plumbing: the handler routes ApiVersions is built from, the one error mapping, error
responses for injected faults, and what several handlers share (topic lookup, config changes)."""
