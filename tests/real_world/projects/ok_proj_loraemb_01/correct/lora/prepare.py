def enable_input_require_grads(embedding):
    def make_inputs_require_grad(module, inputs, output):
        output.requires_grad_(True)

    return embedding.register_forward_hook(make_inputs_require_grad)
