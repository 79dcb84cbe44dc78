#!/usr/bin/env bash
# Qwen3-235B-A22B on one Atlas 800I A2 node (8 cards), 1k in / 1k out,
# 25 concurrent requests: the first field report's final script, after its
# three fixes (expert parallel and FLASHCOMM1 off, the routing Cumsum
# patched in token_dispatcher.py, a full decode graph for batch 25), with
# its host tuning. As the field wrote it: the capture-size key is spelt
# "cudagraph_capture_size" (vLLM's key is cudagraph_capture_sizes).
cpupower frequency-set -g performance
sysctl -w vm.swappiness=0
sysctl -w kernel.numa_balancing=0
sysctl -w kernel.sched_migration_cost_ns=50000

export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=512
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1

vllm serve /models/Qwen3-235B-A22B-W8A8 \
  --served-model-name qwen3 \
  --host 0.0.0.0 --port 8000 \
  --tensor-parallel-size 8 \
  --max-num-seqs 25 \
  --max-model-len 4096 \
  --max-num-batched-tokens 4096 \
  --quantization ascend \
  --trust-remote-code \
  --gpu-memory-utilization 0.9 \
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_size":[25]}'
