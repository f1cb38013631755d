// sync.glsl — a producer dispatch telling the consumer dispatches recorded beside it (no
// pipeline barrier between them) that its output is complete: the early-weights decode stages
// (`VulkanOptions::early_weights`). The consumers (matvec_dec.comp's WAIT) start while the
// producer runs, pull their weights into the cache, then wait here for the producer's epoch.
//
// A slot of the sync buffer is SYNC_SLOT_WORDS words: word 0 counts the producer's finished
// workgroups (zero between uses: the last one resets it), words 32·(1 + c) for c < SYNC_COPIES
// hold the epoch of the slot's last completed use, each copy a 128-byte line of its own so
// that the consumers' polls spread over several lines. Epochs only grow (the host's counter,
// never 0), so a copy never needs clearing; a slot is reused only after barriers have retired
// every earlier user of it.
//
// Safe only where a queue starts a dispatch's workgroups after every workgroup of the dispatches
// recorded before it (the consumers' spinning workgroups can then never keep the producer's
// from running): the host enables it on such devices only. A consumer gives up after
// SYNC_MAX_POLLS polls rather than hang the device (and says so, see sync_wait).
//
// The producers store their outputs through plain (not coherent) references and the consumers
// read them through coherent ones after the wait: enough where a device's stores reach the
// shared cache before the fences order them (NVIDIA's write-through L1, a CPU device); a
// formal release/acquire pair (GL_KHR_memory_scope_semantics) would be the portable form.

const uint SYNC_SLOT_WORDS = 288u; // 9 lines of 32 words
const uint SYNC_COPIES = 8u;
const uint SYNC_MAX_POLLS = 1u << 22;

// Called by every invocation of each producer workgroup after its last store of the output:
// the `producers`-th workgroup to finish publishes `epoch` in every copy.
void sync_signal(Words slot, uint epoch, uint producers, uint tid) {
    memoryBarrierBuffer(); // this workgroup's output is visible before it is counted
    barrier();
    if (tid == 0u) {
        uint done = atomicAdd(slot.v[0], 1u);
        if (done + 1u == producers) {
            atomicExchange(slot.v[0], 0u); // ready for the slot's next use
            memoryBarrierBuffer();
            [[unroll]] for (uint c = 0u; c < SYNC_COPIES; c++) {
                atomicExchange(slot.v[32u * (1u + c)], epoch);
            }
        }
    }
}

shared uint sync_seen;

// Called by every invocation of a consumer workgroup (`ticket` picks its copy): returns once the
// producer has published `epoch` (true; what it wrote is then to be read through coherent
// loads), or false after SYNC_MAX_POLLS polls without it — its consumer then writes NaN, so
// that a producer that never signals shows in the results rather than hanging the device.
bool sync_wait(Words slot, uint epoch, uint ticket, uint tid) {
    if (tid == 0u) {
        uint at = 32u * (1u + ticket % SYNC_COPIES);
        sync_seen = 0u;
        for (uint n = 0u; n < SYNC_MAX_POLLS; n++) {
            if (atomicOr(slot.v[at], 0u) == epoch) {
                memoryBarrierBuffer(); // ordered after the epoch seen, before the barrier
                sync_seen = 1u;
                break;
            }
        }
    }
    barrier();
    memoryBarrierBuffer(); // and the producer's output is seen
    return sync_seen == 1u;
}
