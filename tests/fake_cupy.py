"""A numpy stand-in for the few CuPy calls singe.gpu and gpu_bench make, so
that their marshalling (device pointers, NULL for None, streams, events,
shapes) runs on the CPU against a host build of the same launcher."""

from __future__ import annotations

import time
import types

import numpy as np


class DeviceArray(np.ndarray):
    """Host memory posing as device memory: ``.data.ptr`` like a CuPy array."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


class Stream:
    ptr = 0  # the default stream

    def synchronize(self) -> None:
        pass


class Event:
    def record(self) -> None:
        self.seconds = time.perf_counter()

    def synchronize(self) -> None:
        pass


def asarray(value) -> DeviceArray:
    return np.ascontiguousarray(value, dtype=np.float64).view(DeviceArray)


def full(shape, value) -> DeviceArray:
    return np.full(shape, value).view(DeviceArray)


def asnumpy(array) -> np.ndarray:
    return np.array(array)


cuda = types.SimpleNamespace(
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1, getErrorString=lambda status: f"error {status}"),
    get_current_stream=Stream, Event=Event, get_elapsed_time=lambda start, stop: (stop.seconds - start.seconds) * 1e3)
