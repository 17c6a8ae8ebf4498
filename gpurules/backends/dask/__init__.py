"""A backend that spreads a fit over the workers of a Dask cluster (``backends/dask``).

``DaskBackend`` (client side) implements the backend protocol by fanning each phase out to
one ``PartitionState`` actor per row partition (worker side), each a ``CpuBackend`` over its
partition's binned features. Importing this package imports neither dask nor distributed.
"""
