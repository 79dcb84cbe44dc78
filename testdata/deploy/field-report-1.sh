#!/usr/bin/env bash
# Qwen3-235B-A22B on one Atlas 800I A2 node (8 cards), 1k in / 1k out,
# 25 concurrent requests: the deployment of the first field report before
# tuning (see issue 3). Capture sizes are vLLM-Ascend's default list for
# --max-num-seqs 25.
export HCCL_OP_EXPANSION_MODE=AIV
export HCCL_BUFFSIZE=512
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export OMP_NUM_THREADS=1
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1

vllm serve /models/Qwen3-235B-A22B-W8A8 \
  --served-model-name qwen3 \
  --host 0.0.0.0 --port 8000 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --max-num-seqs 25 \
  --max-model-len 4096 \
  --max-num-batched-tokens 4096 \
  --quantization ascend \
  --trust-remote-code \
  --gpu-memory-utilization 0.9 \
  --compilation-config '{"cudagraph_capture_sizes":[1,2,4,8,16,24]}'
