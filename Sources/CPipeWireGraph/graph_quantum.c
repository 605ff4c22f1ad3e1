/* The quantum the node asks of the graph (node.latency): the configured one, doubled when the
 * graph's driver misses a period or comes within a quarter of one of missing it, and halved
 * again once the smaller one would have held.
 *
 * Why: a driver whose thread is kept off its CPU for a period or more (a virtual machine's host
 * stealing it; docs/CAPTURE.md, "Scale") wakes late and catches up with two cycles back to back,
 * the second forced on before a node that waits for the apps can have run: our output is empty
 * for that quantum, a gap in every app we render at once, where apps played straight to the
 * sink are only delayed. A longer quantum outlasts such stalls (a 7 ms stall: half the 5.3 ms
 * cycles lost at 256 frames, none at 512), as PulseAudio's buffer grows after an underrun.
 * And as PulseAudio's grows before one, when its buffer ran nearly dry: the miss itself is heard
 * (one quantum in every app at once), and on a host that stalls the driver for whole periods
 * shorter stalls may come first — a cycle begun three quarters of a period late is the warning,
 * when one comes (whether it does is the host's doing).
 *
 * The data thread only notes and signals (an eventfd write: no allocation, no lock, no wait);
 * the loop thread judges the miss and asks the server (pw_filter_update_properties), which
 * sorts the graph anew. */
#include "graph_internal.h"

#include <time.h>

static uint64_t now_nsec(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint32_t ss_graph_asked_quantum(const struct ss_pw_graph *g)
{
	uint32_t asked = __atomic_load_n(&g->asked_quantum, __ATOMIC_RELAXED);
	return asked != 0 ? asked : g->config.quantum_frames;
}

/* Loop thread: node.latency as asked now (a node made after a reconnection asks it too). */
static void apply(struct ss_pw_graph *g, uint32_t frames, const char *why)
{
	__atomic_store_n(&g->asked_quantum, frames, __ATOMIC_RELAXED);
	g->last_graph_change_nsec = now_nsec();
	if (g->filter != NULL) {
		char latency[32];
		snprintf(latency, sizeof(latency), "%u/%u", frames, g->config.rate_hz);
		struct spa_dict_item items[] = { SPA_DICT_ITEM_INIT(PW_KEY_NODE_LATENCY, latency) };
		pw_filter_update_properties(g->filter, NULL, &SPA_DICT_INIT(items, 1));
	}
	ss_graph_emit(g, SS_PW_GRAPH_QUANTUM, frames, why);
}

static void arm_recovery(struct ss_pw_graph *g, uint64_t after_nsec)
{
	struct timespec value = { .tv_sec = (time_t)(after_nsec / 1000000000u), .tv_nsec = (long)(after_nsec % 1000000000u) };
	if (value.tv_sec == 0 && value.tv_nsec == 0)
		value.tv_nsec = 1;
	pw_loop_update_timer(pw_thread_loop_get_loop(g->loop), g->quantum_timer, &value, NULL, false);
}

static uint64_t recovery_nsec(const struct ss_pw_graph *g)
{
	return (uint64_t)(g->config.quantum_recovery_seconds * 1e9);
}

/* A cycle played without us is the driver's stall only away from the graph's own changes: as a
 * node or link comes or goes (an app captured or let go, the quantum changed) the server sorts
 * the graph anew and may run a cycle without us (two at 8 apps' start, here). So a miss is
 * judged a moment later, when the registry has told of any change made around it. */
#define SS_JUDGE_AFTER_NSEC 250000000u
#define SS_CHANGE_MARGIN_NSEC 1000000000u

void ss_graph_note_graph_change(struct ss_pw_graph *g)
{
	g->last_graph_change_nsec = now_nsec();
}

static void on_missed(void *data, uint64_t count)
{
	struct ss_pw_graph *g = data;
	(void)count;
	if (g->started)
		pw_loop_update_timer(pw_thread_loop_get_loop(g->loop), g->quantum_judge_timer,
				&(struct timespec){ .tv_nsec = SS_JUDGE_AFTER_NSEC }, NULL, false);
}

static void on_judge(void *data, uint64_t expirations)
{
	struct ss_pw_graph *g = data;
	(void)expirations;
	uint64_t missed = __atomic_load_n(&g->last_miss_nsec, __ATOMIC_ACQUIRE);
	int a_cycle_missed = __atomic_exchange_n(&g->miss_since_signal, 0, __ATOMIC_ACQ_REL);
	__atomic_store_n(&g->raise_signalled, 0, __ATOMIC_RELEASE);
	uint32_t asked = ss_graph_asked_quantum(g);
	if (!g->started || asked * 2 > g->config.maximum_quantum_frames)
		return;
	uint64_t change = g->last_graph_change_nsec;
	uint64_t apart = missed > change ? missed - change : change - missed;
	if (change != 0 && apart < SS_CHANGE_MARGIN_NSEC)
		return;
	uint64_t raises = __atomic_load_n(&g->quantum_raises, __ATOMIC_RELAXED);
	__atomic_store_n(&g->raise_cause_nsec[raises % SS_PW_GRAPH_RAISE_RECORD], missed, __ATOMIC_RELAXED);
	__atomic_store_n(&g->quantum_raises, raises + 1, __ATOMIC_RELEASE);
	/* A miss is a near miss of the smaller quantum too: the wait to step down starts here. */
	__atomic_store_n(&g->last_near_miss_nsec, now_nsec(), __ATOMIC_RELAXED);
	char why[128];
	if (a_cycle_missed)
		snprintf(why, sizeof(why), "the graph's driver missed a period");
	else
		snprintf(why, sizeof(why), "a cycle began within a quarter period of a miss (%.1f ms after it was due)",
				(double)__atomic_load_n(&g->signalled_behind_nsec, __ATOMIC_RELAXED) * 1e-6);
	apply(g, asked * 2, why);
	arm_recovery(g, recovery_nsec(g));
}

static void on_recovery(void *data, uint64_t expirations)
{
	struct ss_pw_graph *g = data;
	(void)expirations;
	uint32_t asked = ss_graph_asked_quantum(g);
	if (!g->started || asked <= g->config.quantum_frames)
		return;
	uint64_t since = now_nsec() - __atomic_load_n(&g->last_near_miss_nsec, __ATOMIC_RELAXED);
	if (since < recovery_nsec(g)) {
		arm_recovery(g, recovery_nsec(g) - since);
		return;
	}
	uint32_t lower = asked / 2 < g->config.quantum_frames ? g->config.quantum_frames : asked / 2;
	/* The smaller quantum's wait starts anew: it must hold as long before the next step. */
	__atomic_store_n(&g->last_near_miss_nsec, now_nsec(), __ATOMIC_RELAXED);
	apply(g, lower, "no cycle late by three quarters of the smaller quantum since the last change");
	if (lower > g->config.quantum_frames)
		arm_recovery(g, recovery_nsec(g));
}

void ss_graph_quantum_start(struct ss_pw_graph *g)
{
	struct pw_loop *loop = pw_thread_loop_get_loop(g->loop);
	g->quantum_event = pw_loop_add_event(loop, on_missed, g);
	g->quantum_timer = pw_loop_add_timer(loop, on_recovery, g);
	g->quantum_judge_timer = pw_loop_add_timer(loop, on_judge, g);
}

void ss_graph_quantum_stop(struct ss_pw_graph *g)
{
	struct pw_loop *loop = pw_thread_loop_get_loop(g->loop);
	if (g->quantum_event != NULL)
		pw_loop_destroy_source(loop, g->quantum_event);
	if (g->quantum_timer != NULL)
		pw_loop_destroy_source(loop, g->quantum_timer);
	if (g->quantum_judge_timer != NULL)
		pw_loop_destroy_source(loop, g->quantum_judge_timer);
	g->quantum_event = NULL;
	g->quantum_timer = NULL;
	g->quantum_judge_timer = NULL;
}

/* Begun more than three quarters of `frames` after its cycle was due: within a quarter period
 * of the driver's catch-up cycle going on without us. */
static int near_miss(int64_t behind_nsec, uint32_t frames, uint32_t rate)
{
	return behind_nsec > 0 && (uint64_t)behind_nsec * 4 * rate > (uint64_t)frames * 3 * 1000000000u;
}

/* Data thread, after each call: `missed`, the sink played a cycle without us; `overloaded`, our
 * call took more CPU time than the quantum lasts (our render, which a longer quantum does not
 * cure); `behind_nsec`, how long after the driver's cycle was due the call began. Only at the
 * quantum asked (a change of quantum resorts the graph, and its own first cycles may miss). */
void ss_graph_quantum_note(struct ss_pw_graph *g, int missed, int overloaded, int64_t behind_nsec,
		uint32_t frames, uint32_t rate, uint64_t ended_nsec)
{
	uint32_t asked = ss_graph_asked_quantum(g);
	if (g->config.maximum_quantum_frames <= g->config.quantum_frames || frames != asked || rate == 0)
		return;
	if ((missed || near_miss(behind_nsec, asked, rate)) && !overloaded && asked * 2 <= g->config.maximum_quantum_frames) {
		if (missed)
			__atomic_store_n(&g->miss_since_signal, 1, __ATOMIC_RELEASE);
		if (!__atomic_exchange_n(&g->raise_signalled, 1, __ATOMIC_ACQ_REL) && g->quantum_event != NULL) {
			__atomic_store_n(&g->signalled_behind_nsec, behind_nsec, __ATOMIC_RELAXED);
			__atomic_store_n(&g->last_miss_nsec, ended_nsec, __ATOMIC_RELEASE);
			pw_loop_signal_event(pw_thread_loop_get_loop(g->loop), g->quantum_event);
		}
	}
	/* The next smaller quantum would have come as near to a miss: it may not come back yet. */
	if (asked > g->config.quantum_frames && near_miss(behind_nsec, asked / 2, rate))
		__atomic_store_n(&g->last_near_miss_nsec, ended_nsec, __ATOMIC_RELAXED);
}

uint32_t ss_pw_graph_asked_quantum_frames(const ss_pw_graph *g) { return ss_graph_asked_quantum(g); }
uint64_t ss_pw_graph_quantum_raises(const ss_pw_graph *g) { return __atomic_load_n(&g->quantum_raises, __ATOMIC_RELAXED); }

uint32_t ss_pw_graph_recent_quantum_raises(const ss_pw_graph *g, double *caused_at_seconds, uint32_t capacity)
{
	/* Written by the loop thread only, slot before count; a raise comes at most once per judge
	 * (250 ms), so the slots copied here are not rewritten meanwhile. */
	uint64_t n = __atomic_load_n(&g->quantum_raises, __ATOMIC_ACQUIRE);
	uint32_t count = 0;
	while (count < capacity && count < SS_PW_GRAPH_RAISE_RECORD && count < n) {
		caused_at_seconds[count] = (double)__atomic_load_n(&g->raise_cause_nsec[(n - 1 - count) % SS_PW_GRAPH_RAISE_RECORD],
				__ATOMIC_RELAXED) * 1e-9;
		count++;
	}
	return count;
}
