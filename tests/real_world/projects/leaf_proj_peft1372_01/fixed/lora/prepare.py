def prepare_model_for_kbit_training(model, embedding):
    for p in model.parameters():
        p.requires_grad_(False)

    def make_inputs_require_grad(module, inputs, output):
        output.requires_grad_(True)

    embedding.register_forward_hook(make_inputs_require_grad)
    return model
