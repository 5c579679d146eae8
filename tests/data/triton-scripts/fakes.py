"""Tensors for Triton scripts on a machine without a GPU: NumPy arrays behind the protocol
Triton takes tensors by (data_ptr, dtype, shape, stride, element_size) and what its interpreter
(TRITON_INTERPRET=1) uses to run a kernel on the CPU (untyped_storage, storage_offset, set_,
copy_). Their dtype prints as torch's does ("torch.float32"), as an autotuner's key shows it."""

import numpy as np


class Dtype:
    def __init__(self, np_dtype):
        self.np = np.dtype(np_dtype)

    def __str__(self):
        return "torch." + self.np.name

    __repr__ = __str__

    @property
    def itemsize(self):
        return self.np.itemsize

    def __eq__(self, other):
        return isinstance(other, Dtype) and other.np == self.np

    def __hash__(self):
        return hash(self.np)


class Storage:
    def __init__(self, buffer):
        self.buffer = buffer  # 1-D uint8

    def data_ptr(self):
        return self.buffer.ctypes.data

    def cpu(self):
        return self

    def copy_(self, other):
        if other is not self:
            self.buffer[:] = other.buffer


class Tensor:
    def __init__(self, array=None, storage=None, offset=0, shape=(), strides=(), dtype=None):
        if array is not None:
            array = np.ascontiguousarray(array)
            storage = Storage(array.reshape(-1).view(np.uint8))
            dtype = Dtype(array.dtype)
            shape = array.shape
            strides = tuple(s // array.itemsize for s in array.strides)
        self._storage, self._offset, self.shape, self._strides, self.dtype = storage, offset, tuple(shape), \
            tuple(strides), dtype
        self.device = "cpu"

    # Triton's tensor protocol
    def data_ptr(self):
        return self._storage.data_ptr() + self._offset * self.element_size()

    def stride(self, i=None):
        return self._strides if i is None else self._strides[i]

    def element_size(self):
        return self.dtype.itemsize

    def size(self):
        return self.shape

    def numel(self):
        return int(np.prod(self.shape))

    # what the interpreter and the autotuner's hooks use
    def untyped_storage(self):
        return self._storage

    def storage_offset(self):
        return self._offset

    def new_empty(self, n, device=None):
        return Tensor(storage=None, dtype=self.dtype)

    def set_(self, storage, offset, size, stride):
        self._storage, self._offset, self.shape, self._strides = storage, offset, tuple(size), tuple(stride)
        return self

    def zero_(self):
        self.numpy()[...] = 0
        return self

    def clone(self):
        return Tensor(self.numpy().copy())

    def copy_(self, other):
        self.numpy()[...] = other.numpy()
        return self

    @property
    def T(self):
        return Tensor(storage=self._storage, offset=self._offset, shape=self.shape[::-1], strides=self._strides[::-1],
                      dtype=self.dtype)

    def numpy(self):
        n = self.dtype.itemsize
        base = self._storage.buffer.view(self.dtype.np)
        return np.lib.stride_tricks.as_strided(base[self._offset:], self.shape, tuple(s * n for s in self._strides))


def tensor(values, dtype=np.float32):
    return Tensor(np.asarray(values, dtype=dtype))
