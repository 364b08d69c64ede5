"""Side-by-side benchmarks: trafka and reference brokers, same client, same workload.

Run with `make bench` (or `python -m bench`). Every run prints absolute numbers and the
ratio trafka / reference; nothing here is a test and nothing asserts on time.
"""
