"""Converts a sharded safetensors checkpoint on a Dask cluster: one task per shard, then the index.

    python examples/dask_checkpoint.py model/ out/ --to bfloat16 --workers 4
    python examples/dask_checkpoint.py model/model.safetensors.index.json out/ --to bf16 \\
        --scheduler tcp://10.0.0.1:8786

Each task runs ``dtcast cast --shards NAME`` (through dtcast.convert_checkpoint) on one shard, on
whichever worker Dask picks; a final task writes the index (``--index-only``) once every shard
is in the output folder. The result is byte-identical to the one-step conversion
``dtcast cast --to T model.safetensors.index.json out/``. Every shard is streamed by the dtcast
program, so a worker's memory stays at a few 4 MiB blocks whatever the shard's size.

On a real cluster, the checkpoint and the output folder must be on a file system every worker
sees under the same path, and every worker needs the dtcast package (with its program). With
--workers N (no --scheduler), a local cluster of N single-threaded processes is started; each
dtcast process still converts on all the threads of its machine (give --threads to limit it).

Needs: dtcast, dask[distributed].
"""

import argparse
import os
import sys

import dtcast


def convert_shard(shard, src, dst, to, options):
    """One task: converts the shard `shard` (a file name of the index) of src into dst."""
    return dtcast.convert_checkpoint(src, dst, to=to, shards=[shard], write_index=False,
                                     **options)


def write_index(src, dst, shard_files):
    """The final task: the index, once every shard is in dst (shard_files, the shard tasks'
    results, makes Dask run it after them)."""
    return dtcast.convert_checkpoint(src, dst, index_only=True)


def run(client, src, dst, to, **options):
    """Converts src into dst on the workers of client; returns the files written."""
    src, dst = os.path.abspath(src), os.path.abspath(dst)
    shards = dtcast.checkpoint_shards(src)
    # pure=False: a conversion writes files, so Dask must run it even if it ran once before.
    futures = client.map(convert_shard, shards, src=src, dst=dst, to=to, options=options,
                         pure=False)
    index = client.submit(write_index, src, dst, futures, pure=False)
    written = [f for result in client.gather(futures) for f in result]
    return written + index.result()


def main(src, dst, to, n_workers=2, scheduler=None, **options):
    """Starts a local cluster of n_workers processes (or connects to the scheduler at the
    address `scheduler`), converts src into dst there, and returns the files written.
    options: those of dtcast.convert_file (select, exclude, round, saturate, threads, ...)."""
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            return run(client, src, dst, to, **options)
    with LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        return run(client, src, dst, to, **options)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src", help="the *.safetensors.index.json, or its folder")
    p.add_argument("dst", help="the output folder (created if missing)")
    p.add_argument("--to", required=True, help="target type (bfloat16, float16, float8e4m3fn...)")
    p.add_argument("--workers", type=int, default=2, help="local worker processes (default 2)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler instead")
    p.add_argument("--exclude", action="append", help="do not convert tensors matching GLOB")
    p.add_argument("--select", action="append", help="convert only tensors matching GLOB")
    p.add_argument("--round", default="rne", help="rne | round | floor | ceil | trunc | odd")
    p.add_argument("--saturate", action="store_true", help="overflow to +-max, not Inf/NaN")
    p.add_argument("--threads", type=int, default=0, help="threads per dtcast process")
    return p.parse_args(argv)


if __name__ == "__main__":
    a = parse_args(sys.argv[1:])
    try:
        files = main(a.src, a.dst, a.to, a.workers, a.scheduler, select=a.select,
                     exclude=a.exclude, round=a.round, saturate=a.saturate or None,
                     threads=a.threads)
    except dtcast.Error as e:
        sys.exit("dask_checkpoint: %s" % e)
    print("wrote %d files into %s" % (len(files), a.dst))
