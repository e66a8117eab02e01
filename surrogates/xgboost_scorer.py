"""XGBoost members scored through ``libxgboost``'s C API, without importing ``xgboost``."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.errors import ModelError

from .regions import split_thresholds


class XGBoostScorer:
    """An XGBoost model scored through ``libxgboost``'s C API (ctypes), without importing the
    ``xgboost`` package.

    ``import xgboost`` pulls in scikit-learn and scipy and was measured at 1.5-5 s cold on this
    machine; ``recommend`` must answer in 1.5 s. The bundle stores each XGBoost member's raw
    model (UBJSON); this class loads it into the same library and calls
    ``XGBoosterPredictFromDense`` exactly as ``Booster.inplace_predict`` does.

    Args:
        raw: the model bytes from ``Booster.save_raw("ubj")``.
        classify: the model is a binary classifier (prediction is P(class 1)).
    """

    _lib = None

    def __init__(self, raw: bytes, classify: bool,
                 thresholds: dict[int, np.ndarray] | None = None):
        import ctypes

        lib = self.library()
        self.raw, self.classify = bytes(raw), classify
        #: feature index -> sorted float32 split thresholds of every tree (None: unknown).
        self.thresholds = thresholds
        self._handle = ctypes.c_void_p()
        self._check(lib.XGBoosterCreate(None, ctypes.c_uint64(0), ctypes.byref(self._handle)))
        self._check(lib.XGBoosterSetParam(self._handle, b"nthread", b"1"))
        buf = ctypes.create_string_buffer(self.raw, len(self.raw))
        # Loading runs on the library's global OpenMP pool, whatever the booster's nthread: on
        # a busy 2-core machine its spin-waiting made one 20-tree load take 8-24 ms instead of
        # 0.16 ms (measured). One global thread while loading, the caller's setting after.
        previous = self._global_threads(1)
        try:
            self._check(lib.XGBoosterLoadModelFromBuffer(self._handle, buf,
                                                         ctypes.c_uint64(len(self.raw))))
        finally:
            self._global_threads(previous)

    @classmethod
    def _global_threads(cls, n: int | None) -> int | None:
        """Set libxgboost's global ``nthread`` to ``n`` (None: leave it); return the old one."""
        import ctypes
        import json

        lib = cls.library()
        out = ctypes.c_char_p()
        if lib.XGBGetGlobalConfig(ctypes.byref(out)) != 0 or not out.value:
            return None
        old = json.loads(out.value.decode()).get("nthread")
        if old == 0:  # "unset": OpenMP's default; the library ignores a request to set 0
            import os

            first = (os.environ.get("OMP_NUM_THREADS") or "").split(",")[0].strip()
            old = int(first) if first.isdigit() and int(first) > 0 else (os.cpu_count() or 1)
        if n is not None and old is not None and n != old:
            lib.XGBSetGlobalConfig(json.dumps({"nthread": int(n)}).encode())
        return old

    @classmethod
    def library(cls):
        """``libxgboost`` loaded by path (finding the package does not import it)."""
        if cls._lib is None:
            import ctypes
            import importlib.util
            import sys
            from pathlib import Path

            spec = importlib.util.find_spec("xgboost")
            if spec is None or spec.origin is None:
                raise ModelError("xgboost is not installed; pip install xgboost")
            name = {"darwin": "libxgboost.dylib", "win32": "xgboost.dll"}.get(sys.platform,
                                                                               "libxgboost.so")
            path = Path(spec.origin).parent / "lib" / name
            lib = ctypes.cdll.LoadLibrary(str(path))
            lib.XGBGetLastError.restype = ctypes.c_char_p
            cls._lib = lib
        return cls._lib

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise ModelError(f"xgboost: {self.library().XGBGetLastError().decode()}")

    def json_model(self) -> dict:
        """The model as XGBoost's JSON document (trees, objective, base score)."""
        import ctypes
        import json

        length = ctypes.c_uint64()
        buf = ctypes.POINTER(ctypes.c_char)()
        self._check(self.library().XGBoosterSaveModelToBuffer(
            self._handle, b'{"format": "json"}', ctypes.byref(length), ctypes.byref(buf)))
        return json.loads(ctypes.string_at(buf, length.value))

    def predict(self, Z: np.ndarray) -> np.ndarray:
        """(n,) prediction (P(class 1) for a classifier) of a (n, f) matrix."""
        import ctypes
        import json

        Z = np.ascontiguousarray(Z, dtype=np.float64)
        interface = json.dumps({"data": [Z.ctypes.data, True], "shape": list(Z.shape),
                                "strides": None, "typestr": "<f8", "version": 3}).encode()
        # A classifier's margins, turned into probabilities by forest.logistic: the same
        # function as the compiled forest's, so both paths give the same bits.
        config = json.dumps({"type": 1 if self.classify else 0, "training": False,
                             "iteration_begin": 0,
                             "iteration_end": 0, "missing": float("nan"),
                             "strict_shape": False, "cache_id": 0}).encode()
        shape = ctypes.POINTER(ctypes.c_uint64)()
        dims = ctypes.c_uint64()
        out = ctypes.POINTER(ctypes.c_float)()
        self._check(self.library().XGBoosterPredictFromDense(
            self._handle, ctypes.c_char_p(interface), ctypes.c_char_p(config), None,
            ctypes.byref(shape), ctypes.byref(dims), ctypes.byref(out)))
        size = int(np.prod([shape[i] for i in range(dims.value)]))
        values = np.ctypeslib.as_array(out, shape=(size,)).reshape(len(Z), -1)[:, -1]
        if self.classify:
            from .forest import logistic

            return logistic(values)
        return values.astype(np.float64)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        lib = type(self)._lib  # the class, not the module global: gone at interpreter exit
        if handle is not None and handle.value and lib is not None:
            lib.XGBoosterFree(handle)

    def __getstate__(self):
        return {"raw": self.raw, "classify": self.classify, "thresholds": self.thresholds}

    def __setstate__(self, state):
        self.__init__(state["raw"], state["classify"], state.get("thresholds"))


def to_scorer(model, classify: bool):
    """The lightest object that predicts like ``model`` (XGBoost -> :class:`XGBoostScorer`)."""
    if type(model).__module__.startswith("xgboost"):
        booster = model.get_booster()
        return XGBoostScorer(booster.save_raw("ubj"), classify, split_thresholds(booster))
    return model
