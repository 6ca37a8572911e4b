"""Published measurements of compressed data-parallel training, side by side with lionsim's figure.

The same form as lionsim.published.cases (each case: the source, the configuration as published, the
figure, the lionsim command that models it, how its figure is read), for compressed methods on
real clusters: 1-bit Adam (DeepSpeed's blog post and its figures), PowerSGD and top-k in GRACE's
released measurements, 8-bit and 1-bit methods in Bagua's benchmark. Each figure is a ratio
inside one source, the compressed run's step against the same source's dense run on the same
cluster ("step_ratio": lionsim's second row's step_s / its first's; a throughput ratio inverted),
since the sources' hardware differs from lionsim's presets.

Nothing is fitted per case. Each runs on its published link (a preset, or a profile under
examples/clusters/ holding the rate the source measured or the line rate at a preset's share)
and device. Where a source gives its compute rate (one GPU's throughput, or a run that waits
for no exchange), `--mfu` is that rate over the device's peak, so the compute in the ratio is the
source's; that is an input read from the source, never adjusted to the compared figure. Each
command states how the source ran its exchange, with the source's file or text cited in the case:
its schedule (DeepSpeed's engine all-reduces after backward: `--overlap none`; GRACE exchanges
tensor by tensor: `--overlap tensors`), its library (GRACE's Horovod and DeepSpeed's first 1-bit
Adam on Ethernet run MPI on host memory: `--traits mpi`, a second command (`versus`) where the two
steps ran on different libraries) and its hierarchy (Bagua's ByteGrad and QAdam: `hier:`).
A miss names what lionsim lacks for it (GAPS).

HOLDOUT_CASES are further points of the same sources kept out of the docs table, so that model
changes are not tuned to them; SECOND_HOLDOUT_CASES points of a source no case uses; FINDINGS are published points lionsim cannot express yet, with the
mechanism each needs.

    python -m lionsim.published.compressed             # the table, lionsim's figures run now
    python -m lionsim.published.compressed --holdout   # the hold-out
    python -m lionsim.published.compressed --holdout2  # the second hold-out, of a source no case uses
    python -m lionsim.published.compressed --markdown  # (with either of the above) the docs' Markdown
    python -m lionsim.published.compressed --case KEY  # one case's full record: source, configuration, command
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys

from lionsim.compute.devices import DEVICES
from lionsim.network.libraries import HOST_CORE_GBPS
from lionsim.published import grace, grace_fit
from lionsim.published import terminal
from lionsim.published.cases import (Case, Finding, _run, compact, findings_markdown, markdown_table, record,
                                     results, summary)

GOAL_MEDIAN = 0.15
"""Median |error| the compressed cases are held to."""
GOAL_WORST = 0.35
"""Worst |error| allowed for a compressed case without a stated reason."""

DEEPSPEED = ("DeepSpeed's 1-bit Adam post (microsoft/DeepSpeed docs/_posts/2020-09-09-onebit-adam-blog-post.md, "
             "2020-09-09)")
GRACE = ("GRACE's released measurements (Xu et al., ICDCS 2021; sands-lab/grace-data GRACE_data_release.pickle, "
         "imagenet-classification, mode throughput, column throughput)")
BAGUA = ("Bagua's benchmark page (BaguaSys/tutorials src/benchmark/index.md, figure e2e_vgg16_128.png, bar heights "
         "read off the figure to 1%)")

_BERT = ("--params", "3.36e8", "--device", "v100", "--overlap", "none", "-s", "adamw@bf16-allreduce",
         "-s", "onebit-adam@compressed-allreduce", "--format", "csv")
_BERT_DENSE = ("--params", "3.36e8", "--device", "v100", "--overlap", "none", "-s", "adamw@bf16-allreduce",
               "--format", "csv")
_BERT_ONEBIT_MPI = ("--params", "3.36e8", "--device", "v100", "--overlap", "none", "--traits", "mpi",
                    "-s", "onebit-adam@compressed-allreduce", "--format", "csv")
_GRACE = ("--model", "resnet50-tf", "--tokens-per-worker", "64", "--device", "v100", "--kernels", "table:v100-tf1.15",
          "--mfu", "0.08",
          "--traits", "mpi", "--overlap", "tensors", "-s", "sgdm@fp32-allreduce")
_BAGUA = ("--model", "examples/models/vgg16.py:vgg16", "--workers", "128", "--gpus-per-node", "8", "--traits", "nccl",
          "--device", "v100", "--mfu", "0.17", "-s", "sgdm@fp32-allreduce")

_DEEPSPEED_CONFIG = ("BERT-Large (336M parameters), {task}, fp16, DeepSpeed's engine (dense: one fp16 NCCL all-reduce "
                     "after backward, allreduce_bucket_size 5e8 holding the whole model; 1-bit Adam v1: the momentum's "
                     "compressed all-reduce after backward over mpi4py, {mpi}), {gpus} V100 at {per_node} per node, {link}; "
                     "compression stage only; {launch}. --mfu {mfu}: the figure's one-GPU point, about {one} samples/s, "
                     "the whole step counted as forward + backward")
_MPI_HOST = ("cuda_aware off on Ethernet, so each buffer is copied to the host and back around every MPI call "
             "(deepspeed/runtime/custom_collectives.py gather_host and allgather_host at commit 01726ce; its "
             "tutorial: 'the communication will happen using sender as well as receiver side memory copies between "
             "CPU and GPU buffers'): priced on --traits mpi in a second command, the dense step on NCCL in the first")
_MPI_GDR = ("cuda_aware on InfiniBand (MVAPICH2-GDR, the tutorial's launch line), reading device memory over RDMA: "
            "priced as NCCL's point-to-point sends on the ib fabric, in the dense step's command")
_TCP = "40 GbE measured at 4.1 Gb/s by iperf (profile examples/clusters/v100x4-40gbe.toml)"
_IB = "40 Gb/s InfiniBand QDR measured at 32 Gb/s by perftest (profile examples/clusters/v100x8-ib-qdr.toml)"
_BERT_TASK = "pre-training, sequence 128, batch 16 per GPU"
_SQUAD_TASK = "SQuAD fine-tuning, sequence 384, batch 3 per GPU"
_GRACE_CONFIG = ("ResNet-50 on ImageNet with TensorFlow's weight layout (tf_cnn_benchmarks convnet_builder.py: "
                 "conv kernels [kh, kw, in, out], the dense one [in, out]: the resnet50-tf preset), {workers} workers of one V100 each (GRACE's mcnodes), {link}, fp32, batch per "
                 "GPU not in the release (tf_cnn_benchmarks' default for resnet50, 64, assumed); TensorFlow 1.15 with "
                 "Horovod 0.21 built without GPU operations (the release's backend mpi: runs not tagged nccl, "
                 "grace-data pull_from_wandb.py), so Horovod's ops run on host memory (TensorFlow copies each tensor "
                 "in and out) over Open MPI's TCP transport (grace-benchmarks TF_scripts.sh: mpirun -mca btl ^openib, "
                 "NCCL_IB_DISABLE=1): --traits mpi; each gradient compressed, exchanged and decompressed on its own "
                 "as backward produces it (benchmark_cnn.py: hvd.allreduce(grad, grace=grc) for each grad; "
                 "grace_dl Communicator.step): --overlap tensors; {method} against the uncompressed all-reduce "
                 "(method none, the same per-tensor path). --mfu 0.08: the release's one-worker throughput, 409 "
                 "img/s (156 ms a step), at lionsim's counted 24.3 GFLOP an image")
_BAGUA_CONFIG = ("VGG-16 on ImageNet, 128 V100 32GB (16 servers of 8 on NVLink: the V100's NVLink2), batch 32 per "
                 "GPU, 100 Gb/s TCP between servers{shaped}, NCCL; {method} against PyTorch DDP (fp32 gradients, per "
                 "25 MB bucket during backward). --mfu 0.17: the figure's asynchronous run (no exchange waited for), "
                 "28,918 img/s, at lionsim's counted 92.7 GFLOP an image")
_BAGUA_100G_SETTINGS = (" with NCCL_MIN_NCHANNELS=4, the settings the same team states for its 100 Gbps cluster of "
                        "8-V100 servers (NVIDIA/nccl issue 450; the page states none; profile "
                        "examples/clusters/v100x8-100gbe.toml)")
_BYTEGRAD = ("ByteGrad as Bagua runs it by default (bagua/torch_api/algorithms/bytegrad.py: hierarchical=True, "
             "scattergather, MinMaxUInt8): per bucket during backward, reduced to each server's leader over NVLink, "
             "8-bit chunks scatter-gathered among the 16 leaders (all-to-all, float sums, all-gather: "
             "centralized_low_precision_synchronous.rs), broadcast inside the server: sgdm@hier:fp8-allreduce (fp8 "
             "codes with a scale per 256 values move 1.6% more than one min and max per chunk, through the same "
             "elementwise kernels: no separate min-max transport)")
_QADAM = ("QAdam as Bagua runs it (bagua/torch_api/algorithms/q_adam.py): past its warm-up each bucket's Adam momentum "
          "updated, then sent through ByteGrad's hierarchical 8-bit scatter-gather: adamw@hier:fp8-allreduce (Adam's "
          "update, a momentum-sized 8-bit exchange per bucket)")

GAPS: dict[str, str] = {
    "codec overlap": "how much of the exchange the source runs beside its codec work, which it does not state",
    "shaped link": "the source's shaped link carried more than its nominal rate",
    "source disagreement": "the source's own figures for the same configuration disagree by more than the error",
}
"""What lionsim lacks, by the name a case's miss gives it (in backticks)."""

FIGURE_5 = {32: (131.0, 131.0 * 6.6), 16: (86.0, 459.0)}
"""DeepSpeed's Figure 5 by GPUs: Adam's and 1-bit Adam's samples/s read off the figure (at 32 GPUs 1-bit
Adam's as Adam's times the speedup the post states, 6.6x)."""
FIGURE_7 = {32: (27.0, 27.0 * 6.2)}
"""DeepSpeed's Figure 7 (SQuAD fine-tuning on the 40 GbE cluster) by GPUs: Adam's samples/s read off the
figure (squad-tcp.png: about 27 at 32 GPUs, 1-bit Adam's point about 170) and 1-bit Adam's as Adam's
times the speedup the post states, 6.2x."""
FIGURE_6 = (848.0, 1695.0)
"""DeepSpeed's Figure 6 at 32 GPUs: Adam's and 1-bit Adam's samples/s, read off the figure."""
PROFILE = {1: (35.99, 239.76, 59.95, 74.21), 2: (34.95, 1897.21, 61.23, 75.26), 4: (36.94, 2133.24, 62.82, 76.85),
           8: (37.91, 2173.35, 60.71, 75.63)}
"""The 1-bit Adam paper's Table 1, Adam on the Ethernet cluster by nodes of 4 V100, batch 16 a GPU:
forward, all-reduce, backward, other (ms). The one-node row gives the profile its intra-node link."""
PROFILE_IB = {1: (32.74, 28.18, 59.73, 57.29), 2: (32.86, 183.74, 56.49, 58.60), 4: (33.45, 297.28, 56.81, 57.98),
              8: (32.81, 336.40, 59.99, 57.79)}
"""The same table on the InfiniBand cluster, by nodes of 8 V100 (the paper: 'the second cluster has 8
V100 GPUs per node'), batch 16 a GPU; its one-node row gives examples/clusters/v100x8-ib-qdr.toml its
intra-node link. Read from the table as quoted in full by rajatbisht.net's detailed summary of the
paper (its rows at batch 1 and 4,096 are left out: the cases run batch 16)."""


DS_BATCH_PER_GPU = 16
"""DeepSpeed's pre-training batch a GPU (Figures 5 and 6)."""
DS_SQUAD_BATCH_PER_GPU = 3
"""DeepSpeed's SQuAD fine-tuning batch a GPU (Figures 7 and 8: "batch size of 3/GPU")."""


def _batch(row) -> float:
    """A step's samples, from lionsim's row: the source's batch, which the command states."""
    return float(row.samples_per_worker * row.workers)


def _ds_tcp_figures(gpus: int):
    """The DeepSpeed 40 GbE pre-training explanation's figures: lionsim's dense step (the frame's first
    row) and 1-bit Adam's (its last: the `versus` command's), Figure 5's steps at `gpus` from its
    samples/s, and the 1-bit Adam paper's profile of the same pre-training on the same cluster."""
    def figures(frame) -> dict[str, str]:
        dense, onebit = frame.iloc[0], frame.iloc[-1]
        adam, onebit_rate = FIGURE_5[gpus]
        profile = PROFILE[gpus // 4]
        profile_s = sum(profile) / 1e3
        figure_step = DS_BATCH_PER_GPU * gpus / adam
        place = ("sits between" if min(profile_s, figure_step) <= dense.step_s <= max(profile_s, figure_step)
                 else "is near neither of")
        return {"gpus": str(gpus), "dense": f"{dense.step_s:.2f}", "onebit": f"{onebit.step_s:.2f}",
                "place": place, "adam": f"{adam:,.0f}", "figure_step": f"{figure_step:.1f}",
                "figure_onebit": f"{DS_BATCH_PER_GPU * gpus / onebit_rate:.2f}",
                "profile": " + ".join(f"{name} {ms:,.0f}" for name, ms in
                                      zip(("forward", "all-reduce", "backward", "other"), profile)),
                "profile_s": f"{profile_s:.2f}", "nodes": str(gpus // 4)}
    return figures


_MISS_DS_TCP = (
    "lionsim's dense step at {gpus} GPUs ({dense} s) {place} the figure's ({adam} samples/s: {figure_step} s) and the "
    "one the same authors profiled on the same 40 GbE cluster (the 1-bit Adam paper, Tang et al. ICML 2021, Table 1: "
    "{profile} ms = {profile_s} s at {nodes} nodes of 4 V100), so the ratio cannot meet both (`source disagreement`); "
    "1-bit Adam's own step ({onebit} s priced, {figure_onebit} s in the figure) is close.")


def _ds_squad_tcp_figures(gpus: int):
    """The DeepSpeed 40 GbE SQuAD explanation's figures: lionsim's dense step (the frame's first row)
    and its exchange, 1-bit Adam's step (the last row: the `versus` command's), Figure 7's steps at
    `gpus` from its samples/s at SQuAD's batch, the time the figure's dense step leaves the all-reduce
    beside lionsim's compute, and the all-reduce of the only profile of the cluster (Table 1, of
    pre-training: the same model's fp16 gradients, so the same all-reduce, with other compute)."""
    def figures(frame) -> dict[str, str]:
        dense, onebit = frame.iloc[0], frame.iloc[-1]
        adam, onebit_rate = FIGURE_7[gpus]
        batch = DS_SQUAD_BATCH_PER_GPU * gpus
        figure_step, figure_onebit = batch / adam, batch / onebit_rate
        figure_exchange = figure_step - (dense.step_s - dense.comm_exposed_s)
        profile_allreduce = PROFILE[gpus // 4][1] / 1e3
        place = ("sits between" if min(profile_allreduce, figure_exchange) <= dense.comm_exposed_s
                 <= max(profile_allreduce, figure_exchange) else "is near neither of")
        return {"gpus": str(gpus), "dense": f"{dense.step_s:.2f}", "exchange": f"{dense.comm_exposed_s:.2f}",
                "adam": f"{adam:,.0f}", "per_gpu": str(DS_SQUAD_BATCH_PER_GPU), "figure_step": f"{figure_step:.2f}",
                "figure_exchange": f"{figure_exchange:.2f}", "place": place,
                "profile_allreduce": f"{profile_allreduce:.2f}", "nodes": str(gpus // 4),
                "onebit": f"{onebit.step_s:.2f}", "figure_onebit": f"{figure_onebit:.2f}",
                "onebit_off": f"{abs(onebit.step_s / figure_onebit - 1):.0%}"}
    return figures


_MISS_DS_SQUAD_TCP = (
    "lionsim's dense step at {gpus} GPUs is {dense} s, {exchange} s of it the fp16 all-reduce; Figure 7's is "
    "{figure_step} s (about {adam} samples/s at {per_gpu} a GPU), which leaves {figure_exchange} s to the all-reduce "
    "beside lionsim's compute. The only profile of this 40 GbE cluster is of pre-training, not SQuAD (the 1-bit Adam "
    "paper, Tang et al. ICML 2021, Table 1, at {nodes} nodes of 4 V100), whose all-reduce of the same model took "
    "{profile_allreduce} s: lionsim's {place} the two, so the ratio cannot meet both (`source disagreement`); "
    "1-bit Adam's own step ({onebit} s priced, {figure_onebit} s in Figure 7) is within {onebit_off}.")


def _ds_ib_figures(gpus: int, rates: tuple[float, float]):
    """The DeepSpeed InfiniBand explanation's figures: lionsim's dense all-reduce (the frame's first row)
    against the same authors' profile of the cluster at as many nodes (PROFILE_IB, of pre-training: the
    same model's fp16 all-reduce), and the figure's steps (`rates`: Adam's and 1-bit Adam's samples/s
    at the pre-training batch) against lionsim's and the profile's."""
    def figures(frame) -> dict[str, str]:
        dense, onebit = frame.iloc[0], frame.iloc[1]
        profile = PROFILE_IB[gpus // 8]
        allreduce = profile[1] / 1e3
        adam, onebit_rate = rates
        figure_dense, figure_onebit = (DS_BATCH_PER_GPU * gpus / rate for rate in (adam, onebit_rate))
        return {"nodes": str(gpus // 8), "ours": f"{dense.comm_exposed_s:.3f}", "profile": f"{allreduce:.3f}",
                "off": f"{abs(dense.comm_exposed_s / allreduce - 1):.0%}", "onebit": f"{onebit.step_s:.2f}",
                "codec": f"{onebit.encode_s + onebit.decode_s:.3f}", "dense": f"{dense.step_s:.2f}",
                "adam": f"{adam:,.0f}", "figure_dense": f"{figure_dense:.2f}",
                "profile_step": f"{sum(profile) / 1e3:.2f}", "onebit_rate": f"{onebit_rate:,.0f}",
                "figure_onebit": f"{figure_onebit:.2f}",
                "onebit_off": f"{abs(onebit.step_s / figure_onebit - 1):.0%}"}
    return figures


_MISS_DS_IB = (
    "lionsim's dense all-reduce at {nodes} nodes of 8 V100, {ours} s, is within {off} of the one the same authors "
    "profiled on this cluster (the 1-bit Adam paper, Tang et al. ICML 2021, Table 1, pre-training: {profile} s), but the figure's dense step is {figure_dense} s (about {adam} samples/s) where the "
    "profile's whole step is {profile_step} s and lionsim's {dense} s, so the ratio cannot meet both (`source "
    "disagreement`, the paper's cluster taken to be the post's: examples/clusters/v100x8-ib-qdr.toml); 1-bit Adam's step ({onebit} s priced, {codec} s of it its codec; {figure_onebit} s in the "
    "figure, about {onebit_rate} samples/s) is within {onebit_off}.")
_POWERSGD = ("PowerSGD rank 1 (GRACE's default), all-reduce of P and Q per tensor, each weight viewed as [shape[0], "
             "rest] of its TensorFlow shape (grace_dl/tensorflow/compressor/powersgd.py: tf.reshape(tensor, "
             "[tensor_shape[0], -1])), so a 3x3 kernel's Q holds a third of it and a 1x1 kernel's all of it: 15.9M "
             "of the 25.6M floats a step")
_TOPK = ("top-k at 1% per tensor with error feedback, all-gather of fp32 values and int32 indices (as lionsim's dgc), "
         "decompressed as GRACE does it, which grace-allgather's decode prices kernel by kernel a tensor "
         "(grace_dl/tensorflow/communicator/allgather.py at 106e3de: for each of the N ranks a slice, a split and a "
         "tf.scatter_nd into a dense zero tensor of the gradient's size, then tf.math.add_n of the N)")
GRACE_THROUGHPUT: dict[tuple[str, str], tuple[str, float]] = {
    ("none", "10g"): ("csptnxrv0", 2200.5328), ("none", "25g"): ("d93b4gh80", 2350.8472),
    ("powersgd", "10g"): ("xa1kk3ne0", 1794.0928), ("powersgd", "25g"): ("xd1ku9ef0", 1847.792),
    ("topk", "10g"): ("iyhzknco0", 1457.3552), ("topk", "25g"): ("33fu1q2f0", 1459.6232),
}
"""GRACE's release, mode throughput, 8 workers, mpi: (run id, img/s) by (method, bw); topk is ratio 0.01
with memory, powersgd rank 1 with memory. Its upper-bound runs are in lionsim.published.grace (10g
only: the release holds no upper-bound run of ResNet-50 at 25g)."""


def _grace_step(method: str, link: str) -> float:
    """The release's step, s: the GRACE cases' 512 images over the run's throughput."""
    return grace.BATCH / GRACE_THROUGHPUT[method, link][1]


_GRACE_RUNS = {
    "powersgd": ("PowerSGD", _POWERSGD, ("-s", "powersgd@lowrank-allreduce", "--powersgd-rank", "1"), "powersgd"),
    "topk": ("top-k", _TOPK, ("-s", "dgc@grace-allgather", "--topk-ratio", "0.01"),
             "topk ratio 0.01 with memory"),
}
"""GRACE's method -> its name in the quantity, the config's words for it, lionsim's run of it and the
release's runs' label (in a case's source)."""


def _grace_case(key: str, method: str, workers: int, link: str, **given) -> Case:
    """A GRACE case: `method` on `workers` workers of the release's cluster at `link` (10g, 25g: the
    10gbe, 25gbe preset) against GRACE's dense run, its source and published ratio read from the
    release's runs (GRACE_THROUGHPUT; GRACE_THROUGHPUT_4W at 4 workers); `given`: its miss and figures."""
    name, said, run, label = _GRACE_RUNS[method]
    gbps = link.removesuffix("g")
    runs = (lambda m: GRACE_THROUGHPUT_4W[m]) if workers == 4 else (lambda m: GRACE_THROUGHPUT[m, link])
    (dense_id, dense), (run_id, ips) = runs("none"), runs(method)
    return Case(key=key, config=_GRACE_CONFIG.format(workers=workers, link=f"{gbps} Gb/s (the {gbps}gbe preset)",
                                                     method=said),
                quantity=f"step ratio, {name} / dense",
                command=("estimate", *_GRACE, *run, "--workers", str(workers), "--network", f"{gbps}gbe",
                         "--format", "csv"),
                read="step_ratio",
                source=f"{GRACE}: none {dense:,.1f} img/s ({dense_id}), {label} {ips:,.1f} ({run_id})",
                published=_ratio(dense, ips), **given)


_DS_EXAMPLES = "microsoft/DeepSpeedExamples at 38f09520 (2020-09-10, '1-bit Adam examples/tutorial', the post's day)"
_BERT_LAUNCH = ("launched as the released pre-training scripts launch every BERT run ({examples}: "
                "bing_bert/ds_train_bert_onebit_bsz4k_seq128.sh, 'NCCL_TREE_THRESHOLD=0 deepspeed --launcher=mvapich', "
                "and the dense scripts alike), which NCCL 2.4, the profiles' version, reads as no all-reduce a tree "
                "(src/enqueue.cc at v2.4.8-1: a tree only where nBytes <= treeThreshold): --algorithm ring on the "
                "dense step").format(examples=_DS_EXAMPLES)
_SQUAD_LAUNCH = ("4 GPUs a node, as the released SQuAD script lays out its 16 ({examples}: "
                 "BingBertSquad/run_squad_deepspeed_onebitadam.sh, NGPU_PER_NODE=4, NUM_NODES=4; it sets no NCCL "
                 "variable): --gpus-per-node 4").format(examples=_DS_EXAMPLES)
_DS_TASKS = {"bert": (_BERT_TASK, 2048, 0.19, 94, _BERT_LAUNCH, ("--algorithm", "ring"), ()),
             "squad": (_SQUAD_TASK, 1152, 0.11, 18, _SQUAD_LAUNCH, (), ("--gpus-per-node", "4"))}
"""A DeepSpeed case's task -> its words, tokens a worker, --mfu, the figure's one-GPU samples/s it came from,
and how the released scripts launch it: their words, the dense step's options and every run's."""
_DS_LINKS = {"40gbe": (_TCP, "examples/clusters/v100x4-40gbe.toml", _MPI_HOST, 4),
             "ibqdr": (_IB, "examples/clusters/v100x8-ib-qdr.toml", _MPI_GDR, 8)}
"""Its cluster -> the link's words, its profile, how MPI ran on it and its V100 a node (the paper's
two clusters: 4 a node on Ethernet, 8 on InfiniBand)."""


def _deepspeed_case(key: str, task: str, gpus: int, link: str, **given) -> Case:
    """A DeepSpeed case: 1-bit Adam against Adam on `gpus` GPUs of the `link` cluster. On 40 GbE the
    source's two steps ran on different libraries (dense on NCCL, 1-bit on MPI): two estimates,
    `versus`; on InfiniBand, one estimate of both. `given`: its source, published ratio, miss and figures."""
    words, tokens, mfu, one, launch, dense, every = _DS_TASKS[task]
    said, profile, mpi, per_node = _DS_LINKS[link]
    per_node = int(every[1]) if every else per_node
    common = ("estimate", "--tokens-per-worker", str(tokens), "--workers", str(gpus), "--network", profile,
              "--mfu", str(mfu), *every)
    if link == "40gbe":
        runs = {"command": (*common, *dense, *_BERT_DENSE), "versus": (*common, *_BERT_ONEBIT_MPI)}
    else:  # one command: the pin acts on the all-reduce alone (1-bit Adam's exchange is point-to-point)
        runs = {"command": (*common, *dense, *_BERT)}
    return Case(key=key, config=_DEEPSPEED_CONFIG.format(task=words, gpus=gpus, per_node=per_node, link=said, mfu=mfu,
                                                            one=one, mpi=mpi, launch=launch),
                quantity="step ratio, 1-bit Adam / Adam", read="step_ratio", **runs, **given)


def _places(x: float) -> float:
    """x as a figure of the texts prints it, to 3 places (0.3076 -> 0.308)."""
    return float(f"{x:.3f}")


def _gap(high: float, low: float) -> str:
    """high - low as the two figures printed beside it read: 0.351 - 0.308 = 0.043 (taken before
    rounding, 0.35082 - 0.30762 would print 0.044 beside them)."""
    return f"{_places(high) - _places(low):.3f}"


def _summed(parts: dict[str, float], total: float) -> dict[str, str]:
    """`parts`, which add up to `total`, each to 3 places such that the printed parts add up to the
    printed total: each part's thousandths rounded down, and the ones short of the total's given to
    the parts of the largest remainders (each figure within 0.001 s of its own value). Parts that do
    not add up to the total are each rounded alone."""
    thousandths = {k: v * 1e3 for k, v in parts.items()}
    floors = {k: math.floor(v) for k, v in thousandths.items()}
    short = round(total * 1e3) - sum(floors.values())
    if abs(sum(parts.values()) - total) > 1e-9 * max(1.0, abs(total)) or not 0 <= short <= len(parts):
        return {k: f"{v:.3f}" for k, v in parts.items()}
    for k in sorted(parts, key=lambda k: floors[k] - thousandths[k])[:short]:  # largest remainders first
        floors[k] += 1
    return {k: f"{n / 1e3:.3f}" for k, n in floors.items()}


def _grace_figures(method: str, link: str):
    """The figures of a GRACE case's explanation: lionsim's from its command's CSV (rows: sgdm, then
    the compressed run), the release's from its runs."""
    def figures(frame) -> dict[str, str]:
        dense, ours = frame.iloc[0], frame.iloc[1]
        dense_id = GRACE_THROUGHPUT["none", link][0]
        run_id = GRACE_THROUGHPUT[method, link][0]
        release_dense, release = _grace_step("none", link), _grace_step(method, link)
        return {"dense": (f"lionsim's dense step, {dense.step_s:.3f} s, is within "
                          f"{abs(dense.step_s / release_dense - 1):.0%} of the release's ({dense_id}, "
                          f"{release_dense:.3f} s)"),
                "rate": f"{link[:-1]} Gb/s", "step": f"{ours.step_s:.3f}",
                "run": f"{run_id}, {release:.3f} s", "gap": _gap(release, ours.step_s).lstrip("-"),
                "side": _side(release, ours.step_s),
                "errors": (f"lionsim's dense step {dense.step_s / release_dense - 1:+.1%} of the release's and its "
                           f"{method} step {ours.step_s / release - 1:+.1%}"),
                "run_10g": GRACE_THROUGHPUT[method, "10g"][0],
                **_summed({"compute": ours.compute_s, "encode": ours.encode_s, "decode": ours.decode_s,
                           "update": ours.update_s, "exposed": ours.comm_exposed_s}, ours.step_s)}
    return figures


_TOPK_COSTS = [m.cost_s() for m in grace.METHODS if m.grace.startswith("topk")]
_TOPK_METHOD = {m.grace: m for m in grace.METHODS}["topk 0.01 (memory)"]  # GRACE's label, not a lionsim name
(_TOPK_UB_ID, _TOPK_UB_IPS), = _TOPK_METHOD.upper_bound
GRACE_ALLGATHER_EXTRA: dict[int, tuple[tuple[str, float], tuple[str, float]]] = {
    2: (("gw1lr8pu0", 726.48), ("6152c2j80", 776.43)),
    4: (("zsmtnpvn0", 1303.13), ("v8hh19x70", 1567.24)),
    8: (("rkrw9e5x0", 2427.44), ("zhl875al0", 3157.28)),
}
"""GRACE's release, mode upper-bound (the exchange and decompression kept, the compressor's work
skipped), 10g, by workers: (run id, img/s) of topk 0.01 with memory (an all-gather, decompressed per
sender) and of randomk 0.01 with memory (an all-reduce). A check of the priced decompression, never
an input: the first's step less the second's grows with workers, as a per-sender decode does."""


def _upper_bound_extra(workers: int) -> float:
    """The release's all-gather top-k upper-bound step less its all-reduce random-k one, s (64 images a worker)."""
    (_, topk), (_, randomk) = GRACE_ALLGATHER_EXTRA[workers]
    return 64 * workers / topk - 64 * workers / randomk


@functools.cache
def _decode_by_workers() -> dict[int, float]:
    """lionsim's priced decode (decode_s) of the top-k cases' run at each GRACE_ALLGATHER_EXTRA worker
    count, on their 10g command (run once: both top-k cases quote it)."""
    run = _GRACE_RUNS["topk"][2]
    return {w: float(_run(("estimate", *_GRACE[:-2], *run, "--workers", str(w), "--network", "10gbe",
                           "--format", "csv")).decode_s.iloc[0]) for w in GRACE_ALLGATHER_EXTRA}


def _upper_bound_check() -> str:
    """The release's upper-bound extra beside lionsim's priced decompression, at 2, 4 and 8 workers."""
    ours, counts = _decode_by_workers(), sorted(GRACE_ALLGATHER_EXTRA)
    ids = "; ".join(f"{w}: {GRACE_ALLGATHER_EXTRA[w][0][0]} against {GRACE_ALLGATHER_EXTRA[w][1][0]}" for w in counts)
    return (f"at {', '.join(map(str, counts[:-1]))} and {counts[-1]} workers the release's upper-bound runs put "
            "all-gather top-k at 1% (exchange and decompression kept, compressor skipped) "
            f"{' / '.join(f'{_upper_bound_extra(w):.3f}' for w in counts)} s a step above all-reduce random-k at 1% "
            f"({ids}), where lionsim prices GRACE's decompression at {' / '.join(f'{ours[w]:.3f}' for w in counts)} s")


def _side(release: float, ours: float) -> str:
    """Where lionsim's step lies against the release's, as the printed gap reads."""
    return "below" if _places(release) >= _places(ours) else "above"


def _grace_topk_figures(link: str):
    """A GRACE top-k case's explanation: _grace_figures's, lionsim's step without its encode beside
    the release's upper-bound run (10g: the release has none at 25g), the per-sender decode's kernels
    and the upper-bound check of its price."""
    base = _grace_figures("topk", link)

    def figures(frame) -> dict[str, str]:
        out, ours = base(frame), frame.iloc[1]
        release = _grace_step("topk", link)
        out["gap"], out["side"] = _gap(release, ours.step_s).lstrip("-"), _side(release, ours.step_s)
        bare = grace_fit.modes(grace_fit.config(_GRACE_RUNS["topk"][2][1], workers=int(ours.workers),
                                                network=f"{link}be")).upper_bound_s  # the release's mode
        tensors, workers = int(ours.buckets), int(ours.workers)  # --overlap tensors: a bucket is a tensor
        kernels = tensors * (4 * workers + 1)
        out["loop"] = (f"{kernels:,} a step on ResNet-50's {tensors} tensors at {workers} workers: "
                       f"{kernels * DEVICES.get('v100').kernel_s:.3f} s at lionsim's floor of "
                       f"{DEVICES.get('v100').kernel_s * 1e6:.0f} us a kernel, before their bytes")
        out["decode"] = f"{ours.decode_s:.3f}"
        ub = grace.BATCH / _TOPK_UB_IPS
        out["rest"] = (f"lionsim's top-k step without its encode, {bare:.3f} s, is {_side(ub, bare)} the release's "
                       f"upper-bound run ({_TOPK_UB_ID}, {ub:.3f} s)" if link == "10g" else
                       f"lionsim's top-k step without its encode is {bare:.3f} s (the release holds no upper-bound "
                       f"run at {link[:-1]} Gb/s; at 10 Gb/s its run is {ub:.3f} s)")
        out["check"] = _upper_bound_check()
        return out
    return figures


_GRACE_LINK = (
    " The link does not set lionsim's step here: Horovod over MPI on TCP (`--traits mpi`) is priced at one host "
    f"core's {HOST_CORE_GBPS} GB/s a rank, under both the 10 and the 25 Gb/s link, so lionsim prices its 10 and 25 "
    "Gb/s cases alike where the release's differ by a few percent (the faster link helped it a little).")
_MISS_GRACE_TOPK = (
    "{dense}; its top-k step, {step} s, is {gap} s {side} the release's ({run}). The sort is priced: GRACE's "
    "TopKCompressor (grace_dl/tensorflow/compressor/topk.py at fd3a7f4) runs tf.math.top_k on each flattened "
    "gradient, which TensorFlow 1.15 sorts whole on one SM whatever k (tensorflow/core/kernels/topk_op_gpu.h, as the "
    "1.15-based DeepRec fork holds it: cub::DeviceSegmentedRadixSort with the row as one segment, one thread block; "
    "tensorflow/tensorflow pull request 55619, 2022: 'only uses 1 SM per segment'), and the cases run `--kernels "
    "table:v100-tf1.15`, whose topk row is the rate at which lionsim's step rises by the release's own compressor "
    f"cost at 8 workers and 10 Gb/s ({_TOPK_METHOD.cost_s():.3f} s a step; the topk runs at ratios 0.01 to 0.25 cost "
    f"{min(_TOPK_COSTS):.3f} to {max(_TOPK_COSTS):.3f} s) over its step without the sort (lionsim.published.grace_fit): "
    "so the 8-worker cases rest on runs of the release they are checked against, and the "
    "4-worker hold-out is the independent check. The decompression is priced as GRACE runs it: GRACE gathers each "
    "tensor in one all-gather (its values bitcast to int32 beside its indices) and then decompresses each worker's "
    "part on its own (grace_dl/tensorflow/communicator/allgather.py at 106e3de: for each of the N ranks a slice, a "
    "split and a tf.scatter_nd into a dense zero tensor of the gradient's size, then tf.math.add_n of the N): N + 1 "
    "dense passes and about 4N + 1 kernels a tensor ({loop}), which the cases price as grace-allgather, "
    "{decode} s a step to decode. A check that fed no price: {check}. What is left: {rest}; lionsim runs each "
    "tensor's exchange beside the codec work of the others, which the release does not say GRACE does (`codec "
    "overlap`)." + _GRACE_LINK)
_POWERSGD_METHOD = {m.grace: m for m in grace.METHODS}["powersgd rank 1 (memory)"]  # GRACE's label, not a lionsim name
(_UB_ID, _UB_IPS), = _POWERSGD_METHOD.upper_bound
_QR = ("The QR is priced: TensorFlow 1.15 registers tf.linalg.qr's GPU kernel as its CPU one with every input and "
       "output in host memory (tensorflow/core/kernels/qr_op_float.cc: 'We temporarily disable QR on GPU due to a bug "
       "in the QR implementation in cuSolver', as the 1.15-based tensorflow-directml fork holds it), so each of GRACE's "
       "two QRs a tensor (grace_dl/tensorflow/compressor/powersgd.py at fd3a7f4) copies its operand to the host, runs "
       "Eigen's Householder QR there and copies Q back, between the P and Q all-reduces GRACE calls inside compress; "
       "the cases run `--kernels table:v100-tf1.15`, whose orthogonalize row is the rate at which lionsim's step rises "
       f"by the release's own compressor cost at 8 workers and 10 Gb/s ({_POWERSGD_METHOD.cost_s():.3f} s a step: "
       f"throughput run {{run_10g}} less upper-bound run {_UB_ID}) over its step without its encode, for lionsim's count "
       "of the orthogonalizations' bytes (lionsim.published.grace_fit: the bytes over the cost alone would take the "
       "QRs as adding to the step in full, where lionsim runs them beside other tensors' exchanges), so the 8-worker "
       "cases rest on runs of the release they are checked against, and the 4-worker hold-out is the independent "
       "check.")
_QR_LEFT = ("What is left: lionsim's step, {step} s, is its compute, {compute} s, its codec, {encode} s to encode "
            "and {decode} s to decode, its update, {update} s, and the exchange backward and the codec leave exposed, "
            "{exposed} s, as lionsim runs each tensor's exchange beside the codec work of the others; the ratio's "
            "error is {errors}. Whether GRACE's exchanges run beside the host's QRs as lionsim's do the release does "
            "not say (`codec overlap`); the orthogonalize row takes lionsim's schedule as given.")
_MISS_GRACE_POWERSGD_10G = (
    "{dense}; its PowerSGD step, {step} s, is {gap} s {side} the release's ({run}). The exchange is priced on GRACE's "
    "bytes (the resnet50-tf preset: 15.9M floats a step). " + _QR + " " + _QR_LEFT + _GRACE_LINK)
_MISS_GRACE_POWERSGD_25G = (
    "{dense}; its PowerSGD step, {step} s, is {gap} s {side} the release's ({run}; the release holds no upper-bound "
    "run at {rate}). The exchange is priced on GRACE's bytes (the resnet50-tf preset: 15.9M floats a step). " + _QR
    + " " + _QR_LEFT + _GRACE_LINK)
GRACE_THROUGHPUT_4W: dict[str, tuple[str, float]] = {
    "none": ("vqhj3top0", 1163.132), "powersgd": ("hvsrw9ms0", 922.1208), "topk": ("jmz908xc0", 788.796),
}
"""GRACE's release, mode throughput, 4 workers at 10g: (run id, img/s) by method, as the hold-out's."""
_GRACE_KERNEL = {"topk": "TensorFlow 1.15 sorts each flattened tensor on one SM",
                 "powersgd": "TensorFlow 1.15 runs tf.linalg.qr on the host"}
"""The mechanism each method's 8-worker cases explain in full, in a clause."""
_GRACE_COST = {"topk": " to ".join(f"{cost:.3f}" for cost in sorted({min(_TOPK_COSTS), max(_TOPK_COSTS)})),
               "powersgd": f"{_POWERSGD_METHOD.cost_s():.3f}"}
"""The release's compressor cost a step at 8 workers (lionsim.published.grace), by method."""


def _grace_holdout_figures(method: str):
    """A 4-worker GRACE hold-out's figures: lionsim's steps (rows: sgdm, then the compressed run) and
    codec, the release's steps from its throughput runs over the command's batch."""
    def figures(frame) -> dict[str, str]:
        dense, ours = frame.iloc[0], frame.iloc[1]
        (dense_id, dense_ips), (run_id, ips) = GRACE_THROUGHPUT_4W["none"], GRACE_THROUGHPUT_4W[method]
        release_dense, release = _batch(dense) / dense_ips, _batch(ours) / ips
        row = (", priced at the v100-tf1.15 row solved from the release's compressor cost at 8 workers, "
               f"{_GRACE_COST[method]} s a step (its throughput runs less its upper-bound ones: {_GRACE_KERNEL[method]})")
        codec = (f"lionsim's codec costs {ours.encode_s + ours.decode_s:.3f} s{row}" if method != "topk" else
                 f"lionsim's encode costs {ours.encode_s:.3f} s{row}, and its decode, GRACE's per-sender "
                 f"decompression (grace-allgather), {ours.decode_s:.3f} s")
        return {"dense": f"{dense.step_s:.3f}", "dense_off": f"{abs(dense.step_s / release_dense - 1):.0%}",
                "dense_run": f"{dense_id}, {release_dense:.3f} s", "step": f"{ours.step_s:.3f}",
                "run": f"{run_id}, {release:.3f} s", "gap": _gap(release, ours.step_s).lstrip("-"),
                "side": _side(release, ours.step_s), "codec": codec, "own": f"grace-{method}-resnet50-10g",
                "exposed": f"{ours.comm_exposed_s:.3f}"}
    return figures


_MISS_GRACE_HOLDOUT = (
    "lionsim's dense step, {dense} s, is within {dense_off} of the release's ({dense_run}); its compressed step, "
    "{step} s, is {gap} s {side} the release's ({run}), where {codec}. As at 8 workers ({own}, explained in full there), lionsim runs each "
    "tensor's exchange beside the codec work of the others (exposed {exposed} s of it), which the release does not "
    "say GRACE does (`codec overlap`).")


BAGUA_THROUGHPUT: dict[tuple[str, str], float] = {
    ("ddp", "100g"): 8893, ("bytegrad", "100g"): 21828, ("qadam", "100g"): 18905,
    ("ddp", "10g"): 4540, ("bytegrad", "10g"): 19714, ("qadam", "10g"): 17848,
}
"""Bagua's figure e2e_vgg16_128.png, img/s by (method, link), bar heights read off the figure to 1%."""
BAGUA_10G_LINE_GBPS = 10 / 8
"""The 10 Gb/s shaped link's line rate, GB/s."""
BAGUA_ASYNC = 28918
"""Bagua's figure e2e_vgg16_128.png, the asynchronous run at 100 Gbps (no exchange waited for), img/s."""
BAGUA_100G_NETWORK = "examples/clusters/v100x8-100gbe.toml"
"""The 100 Gb/s cases' network: the page states no NCCL settings, so the cases price the ones the same team
states for its 100 Gbps TCP cluster of 8-V100 servers (NVIDIA/nccl issue 450: NCCL_MIN_NCHANNELS=4). Two
measurements of the team's agree with them and not with NCCL's default 2 channels a NIC: this page's DDP
step, and the Bagua-Net page's plain NCCL step on 4 such servers (lionsim.published, bagua-net-vgg16-4x8)."""
_DEFAULT_CHANNELS = ("estimate", *_BAGUA, "--network", "100gbe", "--format", "csv")
"""The DDP step on NCCL's default 2 channels a NIC (the 100gbe preset), for the explanation."""


@functools.cache
def _default_channels():
    """_DEFAULT_CHANNELS's row, run once (both 100 Gb/s cases quote it)."""
    return _run(_DEFAULT_CHANNELS)


def _bagua_100g_figures(method: str):
    """The Bagua 100 Gb/s explanation's figures for `method` (BAGUA_THROUGHPUT's key): lionsim's DDP
    step (the frame's first row) against the figure's and on NCCL's default channels, then the
    method's step (the second row) against the figure's and the figure's asynchronous run."""
    def figures(frame) -> dict[str, str]:
        ddp, ours = frame.iloc[0], frame.iloc[1]
        figure_ddp = _batch(ddp) / BAGUA_THROUGHPUT["ddp", "100g"]
        figure = _batch(ours) / BAGUA_THROUGHPUT[method, "100g"]
        asynchronous = _batch(ours) / BAGUA_ASYNC
        return {"ddp": f"{ddp.step_s:.3f}", "ddp_off": f"{abs(ddp.step_s / figure_ddp - 1):.0%}",
                "figure_ddp": f"{figure_ddp:.3f}", "images": f"{_batch(ddp):,.0f}",
                "default": f"{float(_default_channels().step_s.iloc[0]):.2f}", "step": f"{ours.step_s:.3f}",
                "gap": _gap(figure, ours.step_s), "figure": f"{figure:.3f}",
                **_summed({"compute": ours.compute_s, "encode": ours.encode_s, "exposed": ours.comm_exposed_s,
                           "decode": ours.decode_s, "update": ours.update_s}, ours.step_s),
                "over": _gap(figure, asynchronous), "async": f"{asynchronous:.3f}"}
    return figures


_MISS_BAGUA_100G = (
    "lionsim's DDP step, {ddp} s, is within {ddp_off} of the figure's ({figure_ddp} s: {images} images at 8,893 "
    "img/s), priced with the NCCL settings the same team states for its 100 Gbps cluster of 8-V100 servers "
    "(NVIDIA/nccl issue 450: NCCL_MIN_NCHANNELS=4; the page states none, and NCCL's default 2 channels a NIC price "
    "this DDP step at {default} s). Its compressed step, {step} s, is {gap} s below the figure's ({figure} s): "
    "its compute, {compute} s, its codec, {encode} s to encode and {decode} s to decode, its update, {update} s, and "
    "the 8-bit scatter-gather's {exposed} s that backward does not hide (VGG-16's classifier, most of its weights, "
    "leaves backward first), where the figure's step is {over} s longer than the figure's asynchronous run "
    "({async} s, no exchange waited for). Bagua runs each bucket's reduce to the "
    "server's leader, compress, all-to-all, decompress, sum, compress, all-gather, decompress and broadcast one "
    "after another on its communication stream; how much of that chain runs beside backward the page does not say "
    "(`codec overlap`).")


def _bagua_10g_figures(frame) -> dict[str, str]:
    """The Bagua 10 Gb/s explanation's figures: ByteGrad's bytes a server (the frame's second row) and
    DDP's (its first) at the line rate, against the figure's steps."""
    ddp, bytegrad = frame.iloc[0], frame.iloc[1]
    figure_ddp = _batch(ddp) / BAGUA_THROUGHPUT["ddp", "10g"]
    ddp_least = ddp.inter_bytes / 1e9 / BAGUA_10G_LINE_GBPS + ddp.forward_s
    needs = (f"is shorter than the {ddp_least:.2f} s its {ddp.inter_bytes / 1e9:.2f} GB of ring traffic a server take "
             "at the line rate after forward, with backward fully hidden" if ddp_least > figure_ddp else
             f"needs the line rate with backward fully hidden ({ddp_least:.2f} s)")
    return {"mb": f"{bytegrad.inter_bytes / 1e6:,.0f}", "least": f"{bytegrad.inter_bytes / 1e9 / BAGUA_10G_LINE_GBPS:.2f}",
            "figure": f"{_batch(bytegrad) / BAGUA_THROUGHPUT['bytegrad', '10g']:.3f}",
            "rate": f"{BAGUA_THROUGHPUT['bytegrad', '10g']:,.0f}", "ddp": f"{figure_ddp:.2f}", "needs": needs}


_MISS_BAGUA_10G = (
    "ByteGrad's 8-bit scatter-gather moves {mb} MB through each server's NIC a step, at least {least} s at 10 Gb/s "
    "however it overlaps, and the figure's whole step is {figure} s ({rate} img/s); its DDP step ({ddp} s) likewise "
    "{needs} (`shaped link`).")


_BAGUA_RUNS = {"bytegrad": ("ByteGrad", _BYTEGRAD, "sgdm@hier:fp8-allreduce"),
               "qadam": ("QAdam", _QADAM, "adamw@hier:fp8-allreduce")}
"""A Bagua case's algorithm -> its name in the quantity, the config's words for it and lionsim's run of it."""
_BAGUA_LINKS = {"100g": (_BAGUA_100G_SETTINGS, BAGUA_100G_NETWORK),
                "10g": (", shaped to 10 Gb/s (the 10gbe preset)", "10gbe")}
"""Its link -> the config's words for it and the network lionsim prices."""


def _bagua_case(key: str, method: str, link: str, **given) -> Case:
    """A Bagua case: `method` against PyTorch DDP on the benchmark's 128 V100 at `link`. `given`: its
    source, published ratio, miss and figures."""
    name, said, run = _BAGUA_RUNS[method]
    shaped, network = _BAGUA_LINKS[link]
    return Case(key=key, config=_BAGUA_CONFIG.format(shaped=shaped, method=said), quantity=f"step ratio, {name} / DDP",
                command=("estimate", *_BAGUA, "--network", network, "-s", run, "--format", "csv"), read="step_ratio",
                **given)


def _ratio(dense: float, compressed: float) -> float:
    """A compressed step over the dense step, from two throughputs (the step is batch / throughput)."""
    return dense / compressed


COMPRESSED_CASES: tuple[Case, ...] = (
    _deepspeed_case("onebit-adam-bert-40gbe-32", "bert", 32, "40gbe",
                    source=f"{DEEPSPEED}, Figure 5: \"6.6x\" over Adam at 32 GPUs",
                    published=1 / 6.6,
                    miss=_MISS_DS_TCP, figures=_ds_tcp_figures(32)),
    _deepspeed_case("onebit-adam-bert-ibqdr-32", "bert", 32, "ibqdr",
                    source=f"{DEEPSPEED}, Figure 6: \"2x\" over Adam at 32 GPUs",
                    published=1 / 2.0,
                    miss=_MISS_DS_IB, figures=_ds_ib_figures(32, FIGURE_6)),
    _deepspeed_case("onebit-adam-squad-40gbe-32", "squad", 32, "40gbe",
                    source=f"{DEEPSPEED}, Figure 7: \"6.2x\" over Adam at 32 GPUs",
                    published=_ratio(*FIGURE_7[32]),
                    miss=_MISS_DS_SQUAD_TCP, figures=_ds_squad_tcp_figures(32)),
    _deepspeed_case("onebit-adam-squad-ibqdr-16", "squad", 16, "ibqdr",
                    source=f"{DEEPSPEED}, Figure 8: \"1.7x\" over Adam at 16 GPUs",
                    published=1 / 1.7),
    _grace_case("grace-powersgd-resnet50-10g", "powersgd", 8, "10g",
                miss=_MISS_GRACE_POWERSGD_10G, figures=_grace_figures("powersgd", "10g")),
    _grace_case("grace-topk-resnet50-10g", "topk", 8, "10g",
                miss=_MISS_GRACE_TOPK, figures=_grace_topk_figures("10g")),
    _grace_case("grace-powersgd-resnet50-25g", "powersgd", 8, "25g",
                miss=_MISS_GRACE_POWERSGD_25G, figures=_grace_figures("powersgd", "25g")),
    _grace_case("grace-topk-resnet50-25g", "topk", 8, "25g",
                miss=_MISS_GRACE_TOPK, figures=_grace_topk_figures("25g")),
    _bagua_case("bagua-bytegrad-vgg16-100g", "bytegrad", "100g",
                source=f"{BAGUA}: PyTorch DDP 8,893 img/s, Bagua ByteGrad 21,828 at 100 Gbps",
                published=_ratio(8893, 21828),
                miss=_MISS_BAGUA_100G, figures=_bagua_100g_figures("bytegrad")),
    _bagua_case("bagua-bytegrad-vgg16-10g", "bytegrad", "10g",
                source=f"{BAGUA}: PyTorch DDP 4,540 img/s, Bagua ByteGrad 19,714 at 10 Gbps",
                published=_ratio(4540, 19714),
                miss=_MISS_BAGUA_10G, figures=_bagua_10g_figures),
    _bagua_case("bagua-qadam-vgg16-100g", "qadam", "100g",
                source=f"{BAGUA}: PyTorch DDP 8,893 img/s, Bagua QAdam 18,905 at 100 Gbps",
                published=_ratio(8893, 18905),
                miss=_MISS_BAGUA_100G, figures=_bagua_100g_figures("qadam")),
)
"""The compressed cases of the docs table (docs/clusters.md)."""

HOLDOUT_CASES: tuple[Case, ...] = (
    _deepspeed_case("holdout-onebit-adam-bert-40gbe-16", "bert", 16, "40gbe",
                    source=f"{DEEPSPEED}, Figure 5 at 16 GPUs, read off the figure (Adam about 86 samples/s, 1-bit Adam 459)",
                    published=_ratio(*FIGURE_5[16]),
                    miss=_MISS_DS_TCP, figures=_ds_tcp_figures(16)),
    _deepspeed_case("holdout-onebit-adam-bert-ibqdr-16", "bert", 16, "ibqdr",
                    source=f"{DEEPSPEED}, Figure 6 at 16 GPUs, read off the figure (Adam about 541 samples/s, 1-bit Adam 924)",
                    published=_ratio(541, 924)),
    _grace_case("holdout-grace-powersgd-resnet50-10g-4w", "powersgd", 4, "10g",
                miss=_MISS_GRACE_HOLDOUT, figures=_grace_holdout_figures("powersgd")),
    _grace_case("holdout-grace-topk-resnet50-10g-4w", "topk", 4, "10g",
                miss=_MISS_GRACE_HOLDOUT, figures=_grace_holdout_figures("topk")),
    _bagua_case("holdout-bagua-qadam-vgg16-10g", "qadam", "10g",
                source=f"{BAGUA}: PyTorch DDP 4,540 img/s, Bagua QAdam 17,848 at 10 Gbps",
                published=_ratio(4540, 17848)),
)
"""Further points of the same sources, out of the docs table: the check on cases the model was not tuned to."""

ONEBIT_PAPER = ("the 1-bit Adam paper (Tang et al., ICML 2021, arXiv 2102.02888), Table 1: its profile of BERT-Large "
                "pre-training with Adam on the {cluster}, forward + all-reduce + backward + other ms, read from the "
                "table as quoted in full by rajatbisht.net's summary of the paper")
_PROFILE = ("BERT-Large (336M parameters), pre-training, sequence 128, batch 16 per GPU, fp16, Adam in DeepSpeed's "
            "engine (one fp16 NCCL all-reduce after backward), {a} and {b} nodes of {per_node} V100 on the {cluster} "
            "({rate}: profile {profile}, NCCL 2.4 as its [nccl] version says, left to its own choice: the paper "
            "does not say how it profiled, and the released training scripts' NCCL_TREE_THRESHOLD=0, which the "
            "DeepSpeed cases price, would put 2 nodes on a ring where these rows grow as a tree there does). --mfu "
            "{mfu}: the table's own forward + backward, {fb_ms} ms at 8 nodes, for 4.13 TFLOP of a step")
_PROFILE_CLUSTERS = {
    "40gbe": (PROFILE, 4, "40 GbE cluster", "iperf 4.1 Gb/s", "examples/clusters/v100x4-40gbe.toml", "0.33"),
    "ib": (PROFILE_IB, 8, "InfiniBand cluster", "perftest 32 Gb/s", "examples/clusters/v100x8-ib-qdr.toml", "0.36"),
}
"""A Table 1 cluster -> its rows, V100 a node, name, link rate, profile and --mfu (4.13 TFLOP over the 8-node
row's forward + backward at the V100's 125 TFLOPS)."""


def _profile_case(key: str, nodes: int, cluster: str = "40gbe") -> Case:
    rows, per_node, words, rate, profile, mfu = _PROFILE_CLUSTERS[cluster]
    base, step_ms = sum(rows[2]), sum(rows[nodes])
    common = ("estimate", "--tokens-per-worker", "2048", "--network", profile, "--mfu", mfu, *_BERT_DENSE)
    fb_ms = rows[8][0] + rows[8][2]
    return Case(key=key, source=f"{ONEBIT_PAPER.format(cluster=words)}: Adam {step_ms:,.2f} ms a step at {nodes} nodes, {base:,.2f} at 2",
                config=_PROFILE.format(a=2, b=nodes, per_node=per_node, cluster=words, rate=rate, profile=profile,
                                       mfu=mfu,
                                       fb_ms=f"{fb_ms:.1f}"),
                quantity=f"step ratio, Adam at {nodes} nodes / at 2", published=step_ms / base,
                command=(common[0], "--workers", str(2 * per_node), *common[1:]),
                versus=(common[0], "--workers", str(nodes * per_node), *common[1:]), read="step_ratio")


SECOND_HOLDOUT_CASES: tuple[Case, ...] = (
    _profile_case("holdout2-onebit-paper-adam-4-nodes", 4),
    _profile_case("holdout2-onebit-paper-adam-8-nodes", 8),
    _profile_case("holdout2-onebit-paper-adam-ib-4-nodes", 4, "ib"),
    _profile_case("holdout2-onebit-paper-adam-ib-8-nodes", 8, "ib"),
)
"""Points of a source none of the cases uses: the dense Adam steps of the 1-bit Adam paper's own
profile on the Ethernet and InfiniBand clusters of DeepSpeed's post, which check the dense step the
DeepSpeed cases divide by. Nothing was fitted to them: the profiles' inter-node links are the post's
iperf and perftest rates, their intra-node links the table's one-node rows. They are not blind: the
InfiniBand rows were read when that profile took the paper's 8 V100 a node, and the NCCL settings (the
profiles' NCCL 2.4, the DeepSpeed cases' launch settings) were read from DeepSpeed's Docker image and
released scripts after the Ethernet rows' miss (a ring on two nodes) was known. (No compressed step of
a new source could be read here: the stored copies of the PowerSGD and "On the utility of gradient
compression" papers hold their openings only, and CGX's repository publishes no timings.)"""


def ringed(case: Case) -> Case:
    """`case` with every all-reduce pinned to a ring (--algorithm ring in each command), as the
    released pre-training scripts launch BERT (NCCL_TREE_THRESHOLD=0 under NCCL 2.4)."""
    pin = ("--algorithm", "ring")
    return dataclasses.replace(case, command=(*case.command, *pin), versus=(*case.versus, *pin) if case.versus else ())


def ring_line(cases: tuple[Case, ...] = SECOND_HOLDOUT_CASES) -> str:
    """The second hold-out priced on one assumption for both clusters, the scripts' ring pin (its
    table runs NCCL 2.4's own choice, which its InfiniBand rows were read beside): both, said."""
    ring = summary(results(tuple(ringed(c) for c in cases)), GOAL_WORST)
    return (f"Priced instead as the released scripts launch pre-training (--algorithm ring in every command: one "
            f"assumption for both clusters, not read from these rows): median |error| {ring['median']:.1%}, worst "
            f"{ring['worst']:.1%} (goal {GOAL_MEDIAN:.0%} / {GOAL_WORST:.0%}).")


FINDINGS: tuple[Finding, ...] = (
    Finding(
        key="grace-signs-resnet50",
        source=f"{GRACE}: signsgd, efsignsgd and onebit (runs zficj7k10, i0g4ntxk0, 0vanmipp0)",
        config="ResNet-50 on ImageNet, 8 workers of one V100 each, TensorFlow 1.15 + Horovod 0.21 over MPI on TCP, "
               "10 Gb/s; signSGD, EF-signSGD and 1-bit SGD, each an all-gather",
        published="1,655, 1,527 and 1,436 img/s against the dense 2,201",
        why="an all-gather of one byte per sign: GRACE sends each sign as a tf.bool, where lionsim's "
              "allgather-1bit packs 8 signs a byte (a transport, or a wire width on the existing one)",
    ),
    Finding(
        key="grace-terngrad-resnet50",
        source=f"{GRACE}: terngrad (run h2av9rzd0)",
        config="ResNet-50 on ImageNet, 8 workers of one V100 each, TensorFlow 1.15 + Horovod 0.21 over MPI on TCP, "
               "10 Gb/s; TernGrad, an all-gather of int8 levels and a scale per tensor",
        published="1,539 img/s against the dense 2,201",
        why="TernGrad over an all-gather (GRACE's communicator): lionsim's terngrad has all-reduce transports only",
    ),
    Finding(
        key="bagua-decentralized-vgg16",
        source=f"{BAGUA}",
        config="VGG-16 on ImageNet, 128 V100 32GB (16 servers of 8 on NVLink), batch 32 per GPU, 100 Gb/s TCP; "
               "Bagua's decentralized SGD (32-bit and 8-bit) and asynchronous model averaging",
        published="13,682, 15,920 and 28,918 img/s at 100 Gbps against DDP's 8,893",
        why="a decentralized (peer-to-peer averaging) exchange and an asynchronous schedule: lionsim's strategies "
              "all reduce or gather over every worker, and every step waits for its exchange",
    ),
    Finding(
        key="byteps-compression-resnet18",
        source="BytePS's gradient compression page (bytedance/byteps docs/gradient-compression.md, section Exps)",
        config="ResNet18_v2 on CIFAR100, 4 AWS p3.16xlarge (8 V100 each), 25 Gbps; onebit, top-k (k = 1) and "
               "random-k (k = 8) with error feedback, BytePS's parameter servers; batch size not stated",
        published="200 epochs in 703 s dense, 629 s onebit, 508 s top-k, 502 s random-k",
        why="the batch (not published) and a parameter-server exchange of dense or compressed gradients with the "
              "codec on the servers' CPUs: lionsim's param-server transport carries sign votes only",
    ),
    Finding(
        key="intellect-1-utilisation",
        source="INTELLECT-1 technical report (Jaghouar et al., arXiv 2412.01152) and Prime Intellect's release post",
        config="10B Llama-3-style model, DiLoCo with 100 inner steps and int8 pseudo-gradients, up to 14 nodes of "
               "8 H100 across 3 continents",
        published="compute utilisation 83% across continents, 96% within the United States",
        why="the links' rates, which the pages reachable here do not give: with them, `estimate --need` and a "
              "bandwidth_needed case would check it",
    ),
)
"""Published points no lionsim command models yet."""


def markdown(frame) -> str:
    """The docs block: the compressed cases' table (`frame` = results(COMPRESSED_CASES)), its goal
    line and the reasons for the cases beyond GOAL_MEDIAN, then the findings."""
    return "\n".join([markdown_table(frame, COMPRESSED_CASES, GOAL_MEDIAN, GOAL_WORST, GOAL_MEDIAN), "",
                      "Published points lionsim cannot express yet, and what each needs:", "",
                      findings_markdown(FINDINGS, "Needs")])


@terminal.entry
def main(argv: list[str]) -> int:
    given = terminal.parse(argv, __doc__, ("--holdout", "--holdout2", "--markdown"), ("--case KEY",),
                           exclusive=[("--holdout", "--holdout2", "--case"), ("--markdown", "--case")])
    columns = terminal.width()
    if "case" in given:
        case = terminal.find(str(given["case"]), (*COMPRESSED_CASES, *HOLDOUT_CASES, *SECOND_HOLDOUT_CASES))
        print(record(case, results((case,)), columns))
        return 0
    cases = SECOND_HOLDOUT_CASES if given.get("holdout2") else HOLDOUT_CASES if given.get("holdout") else None
    if cases is None and given.get("markdown"):
        print(markdown(results(COMPRESSED_CASES)))
    elif cases is None:
        print(compact(results(COMPRESSED_CASES), COMPRESSED_CASES, GOAL_MEDIAN, GOAL_WORST, GOAL_MEDIAN, columns))
        print("\n" + "\n".join(terminal.prose(f"Published points lionsim cannot express yet: {len(FINDINGS)} "
                                             "(--markdown lists them).", columns)))
    elif given.get("markdown"):
        print(markdown_table(results(cases), cases, GOAL_MEDIAN, GOAL_WORST, GOAL_MEDIAN))
    else:
        print(compact(results(cases), cases, GOAL_MEDIAN, GOAL_WORST, GOAL_MEDIAN, columns))
        if cases is SECOND_HOLDOUT_CASES:
            print("\n" + "\n".join(terminal.prose(ring_line(), columns)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
