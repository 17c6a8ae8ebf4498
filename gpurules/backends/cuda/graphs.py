"""CUDA graphs of the device-resident refinement blocks (``CudaBackend(graphs=True)``).

A block of ``refine`` launches 6 to 9 kernels per step (histograms, prefix sums,
candidates, the selection, the coverage) for up to ``refine.MAX_STEPS`` steps. On an H200
(``docs/gpu-validation.md``, 2026-11-28) the host spent about 1 ms per step issuing them,
against about 0.12 ms of device work: the fit was host-bound. A CUDA graph of a block's
launches, captured once on the backend's stream and then replayed, costs one
``cudaGraphLaunch`` per block instead.

A replay repeats the captured launches exactly: the same kernels, configurations and
arguments. So every launch of a block's step ``r`` depends only on the fit and on what the
graph's key holds, never on the draw or the rule (the kernels read the drawn features, the
groups, the covered list's step and the indicator from the block's record on the device;
the configurations are laid out for the fit's widest features: ``histograms.
HistogramBuilder._histogram_geometry``, ``CudaBackend._launch_search``). A test records
every launch of every block of simulated fits and checks exactly that
(``tests/test_cuda_graphs.py``). A graph refers to the fit's buffers by address, so the
backend drops every graph whenever it drops its Numba views (a buffer re-allocated, a new
fit).

The first block of each key is launched as usual, not captured: it may compile kernels,
load modules and allocate the search's scratch, none of which belongs in a graph; the
second is captured (and replayed), every later one replayed.

Importing this module touches neither CuPy nor a GPU.
"""


class BlockGraphs:
    """Captured graphs of refinement blocks by key, on one CuPy ``stream``.

    ``run(key, steps, launch_step)`` issues ``launch_step(0) ... launch_step(steps - 1)``
    on the stream: directly the first time for a ``(key, steps)``, captured into a graph
    and replayed the second time, replayed afterwards. ``key`` must determine every
    launch's arguments besides the fit's buffers (``refine._graph_key``)."""

    def __init__(self, stream):
        self._stream = stream
        self._graphs = {}
        self._seen = set()
        self.captured = 0  # graphs captured (tests, benchmarks)
        self.replayed = 0  # blocks replayed from a graph

    def clear(self):
        """Drop every graph (the buffers they point at may be freed or moved next)."""
        self._graphs.clear()
        self._seen.clear()

    def run(self, key, steps, launch_step):
        entry = (key, steps)
        graph = self._graphs.get(entry)
        if graph is None:
            if entry not in self._seen:
                self._seen.add(entry)
                for r in range(steps):
                    launch_step(r)
                return
            graph = self._graphs[entry] = self._capture(steps, launch_step)
        graph.launch(self._stream)
        self.replayed += 1

    def _capture(self, steps, launch_step):
        """The graph of ``launch_step(0 .. steps - 1)`` on the stream (nothing runs)."""
        self._stream.begin_capture()
        try:
            for r in range(steps):
                launch_step(r)
        except BaseException:
            self._stream.end_capture()  # leave capture mode; the launches' error matters
            raise
        graph = self._stream.end_capture()
        graph.upload(self._stream)
        self.captured += 1
        return graph


def run_steps(graphs, key, steps, launch_step):
    """``launch_step(0 .. steps - 1)``, through ``graphs`` (a :class:`BlockGraphs`) where
    it is not None."""
    if graphs is not None:
        graphs.run(key, steps, launch_step)
        return
    for r in range(steps):
        launch_step(r)


def suspend(backend, tool):
    """Switch off ``backend``'s graphs while ``tool`` (a phrase: what it does with the
    launches) is attached, for a backend made with ``graphs="auto"``; returns what
    :func:`resume` puts back. ValueError for a backend with ``graphs=True``, whose graphs
    were asked for: the tool would see no launch."""
    graphs = getattr(backend, "_graphs", None)
    if graphs is None:
        return None
    if getattr(backend, "graphs", True) != "auto":
        raise ValueError(f"{tool}; a backend with graphs=True replays them from CUDA "
                         f"graphs: use graphs=False or 'auto'")
    backend._graphs = None
    return graphs


def resume(backend, graphs):
    """Undo :func:`suspend`: ``graphs`` back on ``backend``, emptied (buffers may have
    moved while it was off)."""
    if graphs is not None:
        graphs.clear()
        backend._graphs = graphs

