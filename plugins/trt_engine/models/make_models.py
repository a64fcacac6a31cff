#!/usr/bin/env python3
"""Writes the trt_engine plugin's test models (small ONNX files, committed beside this script).

Run from anywhere: `python3 plugins/trt_engine/models/make_models.py` (needs `onnx` and `numpy`).
The output is deterministic: running it again gives byte-identical files, so a diff after a
re-run means the script or the onnx package changed, not the models.

Every weight is a small rational number (an integer over a power of two), exact in float32, and
is given by a formula that `src/reference.rs` repeats in f64: the plugin's reference for these
models is an independent implementation of their math, not a copy of their outputs.

  mlp.onnx                 y[4,16] = relu(x[4,32] @ W1 + b1) @ W2 + b2
  mlp_dynamic.onnx         the same graph with x[batch,32], batch a dynamic dimension
  fusion_gate.onnx         a tile_ops-sized graph (FusionGate's shape at the fixed profile):
                           alpha = sigmoid(wb*boundary + wu*uncertainty + bias),
                           out = base + alpha * (detail - base); base, detail [1,128,128,128],
                           boundary, uncertainty [1,1,128,128]
  fixtures/mlp_wrong.onnx  mlp.onnx with b2[3] off by 0.25: must fail the accuracy check
  fixtures/corrupt.onnx    not a model at all: the runtime must refuse it (a `failed` case)
  fixtures/string_input.onnx  an Identity over a string tensor: an input dtype the plugin does
                           not generate (`unsupported_dtype:String`)

The fixtures are for the tests only; the plugin's bench.yaml never lists them.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
# ONNX Runtime 1.24+ reads IR version 10; pinned so the bytes do not follow the onnx package.
IR_VERSION = 9

IN, HIDDEN, OUT, BATCH = 32, 32, 16, 4
FG_C, FG_H, FG_W = 128, 128, 128
FG_WB, FG_WU, FG_BIAS = 1.0, 1.0, -0.5


def w1(i, j):
    return ((i * 7 + j * 13) % 17 - 8) / 64.0


def b1(j):
    return ((j * 5) % 11 - 5) / 32.0


def w2(i, j):
    return ((i * 3 + j * 11) % 13 - 6) / 64.0


def b2(j):
    return ((j * 7) % 9 - 4) / 16.0


def mlp_weights():
    W1 = np.array([[w1(i, j) for j in range(HIDDEN)] for i in range(IN)], dtype=np.float32)
    B1 = np.array([b1(j) for j in range(HIDDEN)], dtype=np.float32)
    W2 = np.array([[w2(i, j) for j in range(OUT)] for i in range(HIDDEN)], dtype=np.float32)
    B2 = np.array([b2(j) for j in range(OUT)], dtype=np.float32)
    return W1, B1, W2, B2


def mlp_model(batch, wrong=False):
    W1, B1, W2, B2 = mlp_weights()
    if wrong:
        B2 = B2.copy()
        B2[3] += 0.25
    inits = [
        numpy_helper.from_array(W1, "W1"),
        numpy_helper.from_array(B1, "b1"),
        numpy_helper.from_array(W2, "W2"),
        numpy_helper.from_array(B2, "b2"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "W2"], ["h3"]),
        helper.make_node("Add", ["h3", "b2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, OUT])],
        inits,
    )
    return finish(graph)


def fusion_gate_model():
    scalar = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.float32), name)
    inits = [scalar("wb", FG_WB), scalar("wu", FG_WU), scalar("bias", FG_BIAS)]
    nodes = [
        helper.make_node("Mul", ["boundary", "wb"], ["gb"]),
        helper.make_node("Mul", ["uncertainty", "wu"], ["gu"]),
        helper.make_node("Add", ["gb", "gu"], ["g0"]),
        helper.make_node("Add", ["g0", "bias"], ["g1"]),
        helper.make_node("Sigmoid", ["g1"], ["alpha"]),
        helper.make_node("Sub", ["detail", "base"], ["delta"]),
        helper.make_node("Mul", ["alpha", "delta"], ["step"]),
        helper.make_node("Add", ["base", "step"], ["out"]),
    ]
    full = [1, FG_C, FG_H, FG_W]
    plane = [1, 1, FG_H, FG_W]
    graph = helper.make_graph(
        nodes,
        "fusion_gate",
        [
            helper.make_tensor_value_info("base", TensorProto.FLOAT, full),
            helper.make_tensor_value_info("detail", TensorProto.FLOAT, full),
            helper.make_tensor_value_info("boundary", TensorProto.FLOAT, plane),
            helper.make_tensor_value_info("uncertainty", TensorProto.FLOAT, plane),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, full)],
        inits,
    )
    return finish(graph)


def string_input_model():
    graph = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["t"])],
        "string_input",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("t", TensorProto.STRING, [2])],
    )
    return finish(graph)


def finish(graph):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="apex-bench make_models.py",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def save(model, name):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString(deterministic=True))
    print(f"{name}: {os.path.getsize(path)} bytes")


def main():
    save(mlp_model(BATCH), "mlp.onnx")
    save(mlp_model("batch"), "mlp_dynamic.onnx")
    save(fusion_gate_model(), "fusion_gate.onnx")
    save(mlp_model(BATCH, wrong=True), "fixtures/mlp_wrong.onnx")
    save(string_input_model(), "fixtures/string_input.onnx")
    corrupt = os.path.join(HERE, "fixtures", "corrupt.onnx")
    with open(corrupt, "wb") as f:
        # A protobuf field header that promises more bytes than follow: no parser accepts it.
        f.write(b"\x0a\xff\xff\xff\x0fthis is not an ONNX model\n")
    print(f"fixtures/corrupt.onnx: {os.path.getsize(corrupt)} bytes")


if __name__ == "__main__":
    main()
