import torch
import torch.nn as nn

torch.manual_seed(0)


class Talker(nn.Module):
    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.codec_embedding = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def get_input_embeddings(self):
        return self.codec_embedding


class Qwen3TTSModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.talker = Talker()
        self.speaker_encoder = nn.Linear(4, 8)

    @torch.inference_mode()
    def create_voice_clone_prompt(self, ref_audio):
        ref_code = (ref_audio.abs() * 10).long().clamp(max=15)
        return {"ref_code": ref_code, "ref_spk_embedding": self.speaker_encoder(ref_audio.float())}

    def generate_icl_prompt(self, text_ids, ref_code):
        codec_embeds = self.talker.get_input_embeddings()(ref_code)
        text_embeds = self.talker.get_input_embeddings()(text_ids)
        return torch.cat([codec_embeds, text_embeds], dim=0)


class FasterQwen3TTS:
    def __init__(self, model):
        self.model = model
        self._voice_prompt_cache = {}

    def _prepare_generation(self, ref_audio, key="spk"):
        if key not in self._voice_prompt_cache:
            self._voice_prompt_cache[key] = self.model.create_voice_clone_prompt(ref_audio)
        return self._voice_prompt_cache[key]

    def _build_talker_inputs_local(self, text_ids, voice_clone_prompt, index=0):
        m = self.model
        return m.generate_icl_prompt(
            text_ids,
            ref_code=voice_clone_prompt["ref_code"][index],
        )

    def generate_voice_clone(self, text_ids, ref_audio):
        prompt = self._prepare_generation(ref_audio)
        inputs = self._build_talker_inputs_local(text_ids, prompt)
        return self.model.talker.head(inputs).argmax(-1)


tts = FasterQwen3TTS(Qwen3TTSModel())
print(tts.generate_voice_clone(torch.randint(0, 16, (3,)), torch.randn(1, 4)))
