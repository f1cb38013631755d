// Prints llama.cpp's logits at every position for given token ids, as one JSON document:
//   {"tokens": [...], "n_vocab": N, "logits": [[...], ...]}
// The reference for `zinc logits` on models whose outputs we cannot compare as text (tiny random
// models). Build against a llama.cpp checkout and build directory (see scripts/gen_tiny_models.sh):
//   g++ -O2 -std=c++17 llama_logits.cpp -I$LLAMA/include -I$LLAMA/ggml/include \
//       -L$BUILD/bin -lllama -lggml -lggml-base -Wl,-rpath,$BUILD/bin -o llama-logits
//   llama-logits MODEL.gguf 1,2,3
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL.gguf ID,ID,...\n", argv[0]);
        return 2;
    }
    std::vector<llama_token> tokens;
    std::string list = argv[2];
    size_t at = 0;
    while (at < list.size()) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        tokens.push_back((llama_token) std::atoi(list.substr(at, comma - at).c_str()));
        at = comma + 1;
    }
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = tokens.size() < 256 ? 256 : tokens.size();
    cp.n_batch = cp.n_ctx;
    cp.n_ubatch = cp.n_ctx;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "cannot create a context\n"); return 1; }
    llama_batch batch = llama_batch_init((int32_t) tokens.size(), 0, 1);
    for (size_t i = 0; i < tokens.size(); ++i) {
        batch.token[i] = tokens[i];
        batch.pos[i] = (llama_pos) i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = (int32_t) tokens.size();
    if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "decode failed\n"); return 1; }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    printf("{\"tokens\": [");
    for (size_t i = 0; i < tokens.size(); ++i) printf("%s%d", i ? ", " : "", tokens[i]);
    printf("], \"n_vocab\": %d, \"logits\": [", n_vocab);
    for (size_t i = 0; i < tokens.size(); ++i) {
        const float * l = llama_get_logits_ith(ctx, (int32_t) i);
        printf("%s[", i ? ", " : "");
        for (int v = 0; v < n_vocab; ++v) printf("%s%.9g", v ? ", " : "", l[v]);
        printf("]");
    }
    printf("]}\n");
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
