def freeze_base(model, trainable=("audio_proj",)):
    for name, p in model.named_parameters():
        p.requires_grad_(name.split(".")[0] in trainable)


def enable_input_require_grads(model):
    """Let gradients reach checkpointed blocks although the embeddings are frozen."""

    def make_inputs_require_grads(module, inputs, output):
        output.requires_grad_(True)

    return model.embed_tokens.register_forward_hook(make_inputs_require_grads)
