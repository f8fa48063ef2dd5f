"""Exports the benchmark models to ONNX with random weights (seed 0, batch 1, static shapes).

Run by scripts/export-bench-models.sh with Debian's /usr/bin/python3 (python3-torch,
python3-torchvision) or $NXRT_PYTHON. Prints one line per model: its path and whether it was exported or kept.
"""
import argparse
import inspect
import os
import sys
import warnings

import torch
import torchvision

IMAGE_SHAPE = (1, 3, 224, 224)
# The transformer encoder: 2 layers, d_model 256, 4 heads, feed-forward 1024, sequence 64.
D_MODEL, N_HEAD, D_FF, N_LAYERS, SEQ = 256, 4, 1024, 2, 64


def vision(name):
    return lambda: (getattr(torchvision.models, name)(weights=None), torch.randn(*IMAGE_SHAPE))


def transformer_encoder():
    layer = torch.nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=N_HEAD, dim_feedforward=D_FF, batch_first=True)
    # The nested-tensor fast path is an inference shortcut that ONNX export cannot trace.
    model = torch.nn.TransformerEncoder(layer, num_layers=N_LAYERS, enable_nested_tensor=False)
    return model, torch.randn(1, SEQ, D_MODEL)


# The tracing exporter, which these models were first exported with: torch 2.9 and newer
# default to the dynamo exporter, whose graphs differ; older torch has no `dynamo` argument.
TRACING_EXPORTER = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}

# file stem -> (factory, opset)
MODELS = {
    "resnet18": (vision("resnet18"), 13),
    "resnet50": (vision("resnet50"), 13),
    "mobilenet_v2": (vision("mobilenet_v2"), 13),
    "squeezenet1_1": (vision("squeezenet1_1"), 13),
    "transformer_encoder_op13": (transformer_encoder, 13),
    "transformer_encoder_op17": (transformer_encoder, 17),
}


def export(stem, factory, opset, path):
    torch.manual_seed(0)
    model, example = factory()
    model.eval()
    tmp = path + ".part"
    # Autograd stays on: under no_grad, eval-mode TransformerEncoderLayer takes its fused fast
    # path (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's tracer warnings are about Python control flow, not the graph
        torch.onnx.export(model, example, tmp, opset_version=opset, input_names=["input"],
                          output_names=["output"], do_constant_folding=True, **TRACING_EXPORTER)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("models", nargs="*", help="file stems to export (default: all)")
    args = parser.parse_args()
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        sys.exit(f"export-bench-models: unknown model {unknown[0]}; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for stem in args.models or MODELS:
        factory, opset = MODELS[stem]
        path = os.path.join(args.out, stem + ".onnx")
        if os.path.exists(path) and not args.force:
            print(f"kept      {path}", flush=True)
            continue
        export(stem, factory, opset, path)
        print(f"exported  {path}  (opset {opset}, {os.path.getsize(path) / 2**20:.1f} MiB)", flush=True)


if __name__ == "__main__":
    main()
