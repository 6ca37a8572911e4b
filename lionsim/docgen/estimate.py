"""Docs blocks from `lionsim estimate`: pure modelling, the same on any machine, so each block
runs its command (as a user would, 80 columns off a terminal, in this process: lionsim.docgen.run)
every time it renders."""

from __future__ import annotations

from lionsim.docgen.blocks import BLOCKS, Block
from lionsim.docgen.run import printed

COMMANDS = {
    "estimate-dlion-paper": ["--params", "3e9", "--tokens-per-worker", "1024", "--workers", "64", "--network",
                             "a100x8-4hdr", "--device", "a100", "--overlap", "none", "-s", "adamw@bf16-allreduce",
                             "-s", "dlion-mavo@int8-allreduce", "--kernels", "ideal"],
    "estimate-lioncub": ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--network",
                         "h100x8-10gbe", "--device", "h100", "-s", "lion@fp32-allreduce", "-s", "dlion-mavo@a2a-1bit"],
    "estimate-hier": ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "64", "--network",
                      "h100x8-10gbe", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo@int8-allreduce", "-s",
                      "dlion-mavo@a2a-1bit", "-s", "dlion-mavo@hier-exact", "-s", "dlion-mavo@hier-1bit", "--traits",
                      "ideal", "--kernels", "ideal"],
    "estimate-hier-any": ["--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe", "--device", "h100",
                          "-s", "adamw@bf16-allreduce", "-s", "adamw@fp8-allreduce", "-s", "adamw@hier:fp8-allreduce",
                          "-s", "dlion-mavo@int8-allreduce", "-s", "dlion-mavo@hier:int8-allreduce", "-s",
                          "dlion-mavo@a2a-1bit", "-s", "dlion-mavo@hier:a2a-1bit", "-s", "dlion-mavo@hier-exact"],
    "estimate-per-tensor": ["--model", "resnet50", "--tokens-per-worker", "64", "--device", "v100", "--mfu", "0.08",
                            "--workers", "8", "--network", "10gbe", "--traits", "mpi", "-s", "sgdm@fp32-allreduce",
                            "-s", "dgc@sparse-allgather", "--topk-ratio", "0.01", "--overlap", "tensors"],
    "estimate-per-bucket": ["--model", "resnet50", "--tokens-per-worker", "64", "--device", "v100", "--mfu", "0.08",
                            "--workers", "8", "--network", "10gbe", "--traits", "mpi", "-s", "sgdm@fp32-allreduce",
                            "-s", "dgc@sparse-allgather", "--topk-ratio", "0.01", "--overlap", "buckets"],
}
"""Each block's `lionsim estimate` arguments (the page shows the same command above the block)."""

NEED = {
    "estimate-need": ["--model", "gpt2-1.3b", "--tokens-per-worker", "32768", "--workers", "64", "--network",
                      "dgx-h100", "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo", "-s", "onebit-adam", "-s",
                      "diloco", "--local-steps", "100", "--need", "utilisation=0.9"],
    "readme-need": ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--network",
                    "a100x8-4hdr", "--device", "h100", "-s", "lion@fp32-allreduce", "-s", "dlion-mavo@a2a-1bit", "--need",
                    "utilisation=0.95"],
}
"""Blocks that show the --need table of `lionsim estimate ARGS` (the page shows the command above)."""


def _printed(args: list[str]) -> list[str]:
    """The lines `lionsim estimate ARGS` prints, 80 columns off a terminal."""
    return printed(["estimate", *args])


def table(args: list[str]) -> str:
    """The breakdown table `lionsim estimate ARGS` prints, without its title and footnote (the
    page's prose says what the columns are), as a text code block."""
    lines = _printed(args)
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["run", "compute"])
    while head > 0 and lines[head - 1].strip() and "lionsim" not in lines[head - 1]:
        head -= 1  # a folded header's upper line (`speed` over `up`), never the title
    end = next(i for i in range(head + 1, len(lines)) if not lines[i].strip())
    rows = [line for line in lines[head:end] if not set(line.strip()) <= {"─", "━"}]
    return "```text\n" + "\n".join(line.rstrip() for line in rows) + "\n```\n"


def need_table(args: list[str]) -> str:
    """The --need table `lionsim estimate ARGS` prints, its rows without the rules and the
    footnote (the page's prose says what the columns are), as a text code block."""
    lines = _printed(args)
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["run", "GB/s"])
    end = next(i for i in range(head + 1, len(lines)) if not lines[i].strip())
    rows = [line for line in lines[head:end] if not set(line.strip()) <= {"─", "━"}]
    return "```text\n" + "\n".join(line.rstrip() for line in rows) + "\n```\n"


for _name, _args in COMMANDS.items():
    BLOCKS.add(_name, Block(_name, lambda args=_args: "\n" + table(args) + "\n"))
for _name, _args in NEED.items():  # README's without blank lines around it (its 250-line budget)
    BLOCKS.add(_name, Block(_name, (lambda args=_args: need_table(args)) if _name.startswith("readme")
                            else (lambda args=_args: "\n" + need_table(args) + "\n")))
