"""Placeholder: convert_file, convert_checkpoint (being written)."""


def convert_file(*args, **kwargs):
    raise NotImplementedError


def convert_checkpoint(*args, **kwargs):
    raise NotImplementedError


def checkpoint_shards(*args, **kwargs):
    raise NotImplementedError
