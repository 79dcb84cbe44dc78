#!/bin/bash
export HCCL_OP_EXPANSION_MODE=AIV
export VLLM_ASCEND_ENABLE_FLASHCOMM1=1
# prefill server
vllm serve /models/Qwen3-235B-A22B \
  --tensor-parallel-size 8 \
  --max-num-seqs 16 \
  --enable-expert-parallel \
  --port 8000 &
export VLLM_ASCEND_ENABLE_FLASHCOMM1=0
vllm serve /models/Qwen3-235B-A22B \
  --tensor-parallel-size 8 \
  --max-num-seqs 25 \
  --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' \
  --port 8001 &
wait
