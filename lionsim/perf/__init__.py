"""Performance benchmarks that print figures and write them to a CSV, never assertions:
`python -m lionsim.perf [WHAT ...] [--csv FILE]`.

    imports     import time and wall time of the quick commands (python -X importtime)
    codecs      pack_signs / unpack_signs against numpy.packbits / unpackbits on 10^8 floats,
                on one thread and with the default threads while another process holds a core
    votes       majority vote of N packed sign vectors: bit-sliced counting against
                unpack -> sum -> sign, N = 8, 32, 128, 1024
    gradients   per-worker gradients: a loop against torch.func.vmap, per workload
    sim         the simulator's whole step against N x one worker's forward+backward, and peak
                memory, at N = 1, 8, 32, 128 (vit, mlp) and N = 1000 (mlp)
    spread      booking a step with a 1000-worker lognormal --compute-spread against without
                (the simulator's extra time per step for uneven workers; target < 10 ms)
    bench       wall time of the default `lionsim bench`
    transports  measured comm per step of each vote transport on 2 gloo ranks (25M parameters)
    fidelity    the network model against measured collectives on a real link (loopback, or two
                emulated hosts over a shaped 1 Gbit / 100 Mbit link): per strategy of a training
                run and per call, calibrated and not
    newton-schulz  Muon's Newton-Schulz on each matrix shape of a model preset (gpt2-124m; on
                --kernel-device cuda also gpt2-1.3b, llama-7b) against the FLOPs estimate prices
    compute     one worker's forward + backward timed (float32, TF32, bf16 autocast) beside what
                bench --compute DEVICE books for it (gpt and vit, small; paper-size on cuda, and
                gpt2-124m and gpt2-345m beside estimate's compute)
    sweep       cells per hour of an 8-cell grid (vit tiny, N = 2, 4, 1gbe and 10gbe, seeds 0, 1,
                dlion-mavo@a2a-1bit): --jobs 1, --jobs 2, Ray on two local nodes

Every figure is a median of repeated runs in one invocation; ratios are taken within one run
(these machines are noisy), and each simulator point runs in a fresh process so its peak
memory is its own.
"""
