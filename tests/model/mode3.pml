/*
 * EPIC Mode-III (connection augmented): AllReduce, Reduce and Broadcast through Pipes, a
 * Promela model for spin. docs/model-mode3.md describes it; tests/model/run_spin.sh runs it.
 *
 * Every hop (rank -> switch, switch -> switch, switch -> rank) is its own reliable link with
 * its own PSN sequence, cumulative ACKs and go-back-N retransmission on a timeout. A switch
 * keeps a Pipe per direction: N entries (payload + degree), a psnStart (valid PSNs
 * [psnStart, psnStart + N)), in-endpoints (the fan-in; each the responder of a hop, which
 * takes PSNs in order: CheckDuplicate) and out-endpoints (lastAcked, maxPsnSent each).
 * Nothing is reflected end to end: a switch ACKs what it has received, and recycles an entry
 * only when every out-endpoint has had it acknowledged (psnStart = min(lastAcked) + 1).
 *
 * Parameters (cpp macros: spin -a -DNAME=value mode3.pml):
 *   PRIM       0 AllReduce (every rank sends, every rank receives), 1 Reduce (every rank
 *              sends, rank 0 receives), 2 Broadcast (rank 0 sends, the others receive)
 *   NR         ranks, 2..4
 *   TWO_LEVEL  0: one switch (the root) with the NR ranks as children;
 *              1: leaf 0 serves ranks 0..H-1, leaf 1 ranks H..NR-1 (H = (NR+1)/2), the root
 *                 has the two leaves as children
 *   MW         a rank's upload window (PSN p may be sent while p < lastAcked + 1 + MW) (2)
 *   PIPE_N     entries per Pipe, N (2*MW); PSN p uses entry p mod N
 *   NPKT       PSNs 0..NPKT-1 per rank, at most 6; NPKT > PIPE_N makes PSNs reuse entries
 *   MAXLOSS    packets lost in the whole run (any hop, data or ACK)
 *   MAXDUP     data packets duplicated in the whole run
 *   REORDER    reorder events in the whole run (see MAY_DELIVER); < 0: every hop is a bag
 *   MAXSPUR    premature retransmission timeouts (a timer fires while packets are in flight)
 *   GHOST      1: also assert why the Pipe is safe, with global knowledge no switch has
 *   BUG        0: the protocol of the EPIC specification; otherwise a deliberately wrong rule,
 *              for which spin must find a violation (negative controls):
 *     1 MODE2_RECYCLE  Mode-II's RecycleBuffer inside the Pipe: entries are not recycled when
 *                      psnStart advances; instead, when PSN p >= MW completes, the entry of
 *                      p - MW, (p + MW) mod 2MW, is cleared (needs PIPE_N == 2*MW)
 *     2 NO_RANGE       no range check: a PSN >= psnStart + N is accepted like any other
 *     3 FASTEST_OUT    psnStart = max(lastAcked) + 1: the fastest out-endpoint recycles
 *
 * Replaying a trail (spin -t -DNAME=value ... mode3.pml) prints the protocol events.
 */

#ifndef PRIM
#define PRIM 0
#endif
#ifndef NR
#define NR 2
#endif
#ifndef TWO_LEVEL
#define TWO_LEVEL 0
#endif
#ifndef MW
#define MW 2
#endif
#ifndef PIPE_N
#define PIPE_N (2 * MW)
#endif
#ifndef NPKT
#define NPKT 5
#endif
#ifndef MAXLOSS
#define MAXLOSS 1
#endif
#ifndef MAXDUP
#define MAXDUP 1
#endif
#ifndef REORDER
#define REORDER 1
#endif
#ifndef MAXSPUR
#define MAXSPUR 0
#endif
#ifndef GHOST
#define GHOST 1
#endif
#ifndef BUG
#define BUG 0
#endif
/* copies of one (hop, PSN) in flight at once; more is reported as an error */
#ifndef CAP
#define CAP 4
#endif

#define BUG_MODE2_RECYCLE 1
#define BUG_NO_RANGE 2
#define BUG_FASTEST_OUT 3

#if NPKT > 6
#error "NPKT is at most 6 (the receive and timer choices below are unrolled for PSNs 0..5)"
#endif
#if BUG == BUG_MODE2_RECYCLE && PIPE_N != 2 * MW
#error "Mode-II's RecycleBuffer rule assumes 2*MW entries"
#endif

#define P_ALLREDUCE 0
#define P_REDUCE 1
#define P_BROADCAST 2

/* ---- tree -------------------------------------------------------------------------------- */
/* Node ids: ranks 0..NR-1, then the switches; the root is the last node. CIDX: a child's index
 * at its parent (its ghost arrival bit in the parent's Pipe). */
#if TWO_LEVEL
#define NSW 3
#define HALF ((NR + 1) / 2)
#define LEAF0 NR
#define LEAF1 (NR + 1)
#define ROOT (NR + 2)
#define PARENT(n) ((n) < HALF -> LEAF0 : ((n) < NR -> LEAF1 : ROOT))
#define CIDX(n) ((n) < HALF -> (n) : ((n) < NR -> (n) - HALF : (n) - LEAF0))
#else
#define NSW 1
#define ROOT NR
#define PARENT(n) ROOT
#define CIDX(n) (n)
#endif
#define NNODE (NR + NSW)
#define NLINK (NNODE - 1)

/* ---- primitives: who sends, who receives --------------------------------------------------- */
#if PRIM == P_ALLREDUCE
#define SENDS(r) 1
#define RECVS(r) 1
#elif PRIM == P_REDUCE
#define SENDS(r) 1
#define RECVS(r) ((r) == 0)
#else
#define SENDS(r) ((r) == 0)
#define RECVS(r) ((r) != 0)
#endif
/* does node n (a rank, or a leaf with its ranks) send up / receive from its parent? */
#if TWO_LEVEL
#define ANY2(F, a, cnt) (F(a) || ((cnt) > 1 && F((a) + 1)))
#define SUB_SENDS(n) ((n) < NR -> SENDS(n) : ((n) == LEAF0 -> ANY2(SENDS, 0, HALF) : ANY2(SENDS, HALF, NR - HALF)))
#define SUB_RECVS(n) ((n) < NR -> RECVS(n) : ((n) == LEAF0 -> ANY2(RECVS, 0, HALF) : ANY2(RECVS, HALF, NR - HALF)))
#else
#define SUB_SENDS(n) SENDS(n)
#define SUB_RECVS(n) RECVS(n)
#endif

/* ---- hops -------------------------------------------------------------------------------- */
/* Every non-root node n has two hops to its parent: UP(n) (n -> parent) and DN(n)
 * (parent -> n). A hop has a sender (a rank's requester, or a switch's out-endpoint) and a
 * receiver (a switch's in-endpoint, or a rank's responder). A hop is used when the primitive
 * moves data over it. */
#define NHOP (2 * NLINK)
#define UP(n) (n)
#define DN(n) (NLINK + (n))
#define IS_UP(h) ((h) < NLINK)
#define CHILD(h) (IS_UP(h) -> (h) : (h) - NLINK)
#define HSRC(h) (IS_UP(h) -> CHILD(h) : PARENT(CHILD(h)))
#define HDST(h) (IS_UP(h) -> PARENT(CHILD(h)) : CHILD(h))
#define USED(h) (IS_UP(h) -> SUB_SENDS(CHILD(h)) : SUB_RECVS(CHILD(h)))

/* ---- Pipes ------------------------------------------------------------------------------- */
/* Switch s has an upward Pipe UPIPE(s) (in: its children's uploads; out: the parent, or at the
 * root the children) and, below the root, a downward Pipe DPIPE(s) (in: the result from the
 * parent, fan-in 1; out: its children). */
#define NPIPE (2 * NSW)
#define UPIPE(s) ((s) - NR)
#define DPIPE(s) (NSW + (s) - NR)
/* the Pipe a hop feeds (its receiver is a switch) / drains (its sender is a switch) */
#define INPIPE(h) (IS_UP(h) -> UPIPE(HDST(h)) : DPIPE(HDST(h)))
#define OUTPIPE(h) (IS_UP(h) -> UPIPE(HSRC(h)) : (HSRC(h) == ROOT -> UPIPE(ROOT) : DPIPE(HSRC(h))))
/* an in-endpoint's arrival bit in its Pipe's entries (ghost) */
#define KBIT(h) (IS_UP(h) -> CIDX(CHILD(h)) : 0)

/* The tree's shape for the primitive, computed once by init from the macros above (constants;
 * arrays rather than macros because spin limits the size of an inline's expanded text). */
#define NONE 255
bit used[NHOP];       /* USED(h) */
byte inpipe[NHOP];    /* the Pipe hop h feeds, or NONE (unused, or its receiver is a rank) */
byte outpipe[NHOP];   /* the Pipe hop h drains, or NONE (unused, or its sender is a rank) */
byte fanin[NPIPE];    /* in-endpoints per Pipe (0: the Pipe is not used) */
#if GHOST
byte fullBm[NPIPE];     /* every in-endpoint's arrival bit */
#endif

#define EIDX(q, p) ((q) * PIPE_N + (p) % PIPE_N)
byte psnStart[NPIPE];         /* valid PSNs: [psnStart, psnStart + N) */
byte eVal[NPIPE * PIPE_N];    /* payload buffer: the aggregate, then the result */
byte eDeg[NPIPE * PIPE_N];    /* degree buffer: contributions added */
#if GHOST
/* ghosts (no switch stores them): the PSN the entry holds, and one arrival bit per in-endpoint,
 * to assert that each contribution is added exactly once */
byte ePsn[NPIPE * PIPE_N];
byte eBm[NPIPE * PIPE_N];
#endif

/* ---- data -------------------------------------------------------------------------------- */
/* Rank r's input for PSN p: one base-4 digit per rank, so a contribution added twice shows in
 * the sum, times a factor of the PSN, so a contribution added to another PSN shows too (PSNs
 * that share an entry are N apart; N = 2 or 4 is never a multiple of 3). */
#define INPUT(r, p) ((1 << (2 * (r))) * (1 + (p) % 3))
#if PRIM == P_BROADCAST
#define EXPECTED(p) INPUT(0, p)
#elif NR == 2
#define EXPECTED(p) (5 * (1 + (p) % 3))
#elif NR == 3
#define EXPECTED(p) (21 * (1 + (p) % 3))
#else
#define EXPECTED(p) (85 * (1 + (p) % 3))
#endif

/* ---- hop state ------------------------------------------------------------------------------ */
byte una[NHOP];   /* sender: lastAcked + 1 (every PSN < una is acknowledged by the receiver) */
byte nxt[NHOP];   /* sender: a rank's next PSN to (re)transmit; a switch's maxPsnSent + 1 */
byte epsn[NHOP];  /* receiver: a rank's next result PSN expected (results accepted in order);
                     a switch in-endpoint's first PSN not yet received (its cumulative ACK) */

/* data packets in flight on hop h: a multiset, counted per PSN; all copies of one PSN carry one
 * payload (asserted: retransmissions must be identical) */
#define DIDX(h, p) ((h) * NPKT + (p))
byte dCnt[NHOP * NPKT];
byte dVal[NHOP * NPKT];
/* ACKs in flight on hop h, value a = "every PSN < a received". ACKs are cumulative and
 * idempotent, so in flight they are a set, and one the sender already has is not kept. */
#define AIDX(h, a) ((h) * (NPKT + 1) + (a))
bit ackIn[NHOP * (NPKT + 1)];
byte pend[NNODE];  /* packets waiting at each node (derived from the above) */
byte inflight;     /* packets in flight anywhere (derived) */

/* used hops whose sender does not have every PSN acknowledged yet (init sets it; derived).
 * ALLDONE: each rank's uploads, each partial and each result acknowledged, so every receiving
 * rank has every result and every Pipe is drained. (A counter, not a conjunction over the
 * hops: the LTL parser reads `->` as implication, so ALLDONE cannot use USED(h).) */
byte hopsLeft = 255;
#define ALLDONE (hopsLeft == 0)

/* ---- faults ------------------------------------------------------------------------------ */
byte lossLeft = MAXLOSS;
byte dupLeft = MAXDUP;
byte spurLeft = MAXSPUR;
/* Reordering: delivering a data packet while a lower PSN is in flight on the same hop is a
 * reorder event (hops are otherwise in PSN order). REORDER >= 0 bounds the events in the whole
 * run; REORDER < 0 makes every hop a bag. ACKs may always overtake each other (cumulative). */
#if REORDER >= 0
byte reorderLeft = REORDER;
#define MAY_DELIVER(h, P) (reorderLeft > 0 || NONE_BELOW(h, P))
#define CHARGE(h, p) \
  if \
  :: !NONE_BELOW(h, p) -> reorderLeft--; fired = 0; \
     printf("  (reorder: psn %d overtakes a lower psn on hop %d)\n", p, h) \
  :: else \
  fi
#else
#define MAY_DELIVER(h, P) true
#define CHARGE(h, p) skip
#endif
#define NB1(h, P, q) ((P) <= (q) || dCnt[DIDX(h, q)] == 0)
#define NONE_BELOW(h, P) (NB1(h, P, 0) && NB1(h, P, 1) && NB1(h, P, 2) && NB1(h, P, 3) && NB1(h, P, 4))

/* Retransmission timers, one per sender (bit h of `fired` for hop h's sender). The timeout
 * that recovers from loss fires when nothing is in flight anywhere and the sender has
 * unacknowledged PSNs; it then fires only once until something that can happen only finitely
 * often happens (a contribution aggregated, a result accepted, an ACK that moves lastAcked,
 * a fault). So every run is finite, and a run that stops before ALLDONE is a real livelock:
 * every timer has fired and nothing moved. A timer that fires while packets are in flight is
 * premature: a bounded fault (MAXSPUR). */
short fired;

/* ---- hop primitives (cpp macros: Promela inlines cannot take array elements by name) ----- */
#define PUT1(h, p, v) \
  assert(dCnt[DIDX(h, p)] == 0 || dVal[DIDX(h, p)] == (v)); assert(dCnt[DIDX(h, p)] < CAP); \
  dCnt[DIDX(h, p)]++; dVal[DIDX(h, p)] = (v); pend[HDST(h)]++; inflight++
/* a lossy, duplicating hop: the packet is lost, delivered twice, or delivered once */
#define SEND(h, p, v) \
  if \
  :: lossLeft > 0 -> lossLeft--; fired = 0; printf("  (lost)\n") \
  :: dupLeft > 0 -> dupLeft--; fired = 0; printf("  (duplicated)\n"); PUT1(h, p, v); PUT1(h, p, v) \
  :: true -> PUT1(h, p, v) \
  fi
#define TAKE(h, p, v) \
  v = dVal[DIDX(h, p)]; dCnt[DIDX(h, p)]--; \
  if :: dCnt[DIDX(h, p)] == 0 -> dVal[DIDX(h, p)] = 0 :: else fi; \
  pend[me]--; inflight--

/* the receiver of hop h sends its cumulative ACK (epsn[h]): only if it tells the sender
 * something new and is not already in flight (otherwise it would be a no-op on arrival) */
inline send_ack(h) {
  if
  :: epsn[h] > una[h] && !ackIn[AIDX(h, epsn[h])] ->
     if
     :: lossLeft > 0 -> lossLeft--; fired = 0; printf("  (ACK %d on hop %d lost)\n", epsn[h], h)
     :: true -> ackIn[AIDX(h, epsn[h])] = 1; pend[HSRC(h)]++; inflight++
     fi
  :: else
  fi
}

/* the sender of hop h gets ACK a: lastAcked = a - 1; ACKs still in flight that acknowledge no
 * more than a are now no-ops: dropped */
inline take_ack(h, a) {
  assert(a > una[h]);
  una[h] = a; fired = 0;
  if :: a == NPKT -> hopsLeft-- :: else fi;
  g = 1;
  do
  :: g <= a -> if :: ackIn[AIDX(h, g)] -> ackIn[AIDX(h, g)] = 0; pend[me]--; inflight-- :: else fi; g++
  :: else -> break
  od;
  g = 0
}

/* ---- ranks: an RC requester for the uploads, an RC responder for the results ------------- */

/* rank r (hop h = UP(r)) transmits every upload its window allows, at once (a later
 * transmission is the same packet delayed on the hop, which the hop model covers) */
inline transmit(h) {
  do
  :: nxt[h] < una[h] + MW && nxt[h] < NPKT ->
     printf("r%d: upload psn %d = %d\n", me, nxt[h], INPUT(me, nxt[h]));
     SEND(h, nxt[h], INPUT(me, nxt[h]));
     nxt[h]++
  :: else -> break
  od
}

/* the result p = v reaches rank `me` on hop h = DN(me) */
inline rank_result(h, p, v) {
  assert(v == EXPECTED(p));   /* every result is the exact reduction (Broadcast: the source's) */
  if
  :: p == epsn[h] ->
     printf("r%d: result psn %d = %d accepted\n", me, p, v);
     epsn[h]++; fired = 0;
     send_ack(h)
  :: p < epsn[h] ->    /* a duplicate: ACK again */
     printf("r%d: result psn %d again\n", me, p);
     send_ack(h)
  :: p > epsn[h] ->    /* out of sequence: dropped (the switch's timer resends) */
     printf("r%d: result psn %d out of sequence (expect %d), dropped\n", me, p, epsn[h])
  fi
}

/* ---- switches: the Pipe ------------------------------------------------------------------ */

/* PSN p is complete in Pipe q (degree == fan-in): send it to every out-endpoint */
inline complete(q, p) {
  e = EIDX(q, p);
  printf("sw%d: psn %d complete = %d -> out-endpoints\n", me, p, eVal[e]);
  g = 0;
  do
  :: g < NHOP ->
     if
     :: outpipe[g] == q ->
        printf("sw%d: psn %d = %d -> node %d\n", me, p, eVal[e], HDST(g));
        SEND(g, p, eVal[e]);
        if :: nxt[g] <= p -> nxt[g] = p + 1 :: else fi   /* maxPsnSent */
     :: else
     fi;
     g++
  :: else -> break
  od;
  g = 0;
#if BUG == BUG_MODE2_RECYCLE
  /* Mode-II's RecycleBuffer: p complete frees the entry of p - MW, (p + MW) mod 2MW. In Mode-II
   * every rank has sent p, so every rank's window has passed p - MW. Here a rank's window
   * moves with its first hop's ACKs: it may already have sent p + MW into that entry. */
  if
  :: p >= MW ->
     e = EIDX(q, p + MW);
     printf("sw%d: Mode-II recycle: clear entry %d (psn %d completed)\n", me, e % PIPE_N, p);
     eVal[e] = 0; eDeg[e] = 0;
#if GHOST
     eBm[e] = 0;
#endif
     skip
  :: else
  fi;
#endif
  e = 0
}

/* a data packet p = v arrives at in-endpoint h of Pipe q (Mode-III: receive). The in-endpoint
 * is the responder of a reliable hop: it takes its sender's PSNs in order (epsn), so
 * CheckDuplicate is p < epsn, and each PSN of each in-endpoint reaches AggregateData once. */
#if BUG == BUG_NO_RANGE
#define BEYOND(q, p) false
#else
#define BEYOND(q, p) ((p) >= psnStart[q] + PIPE_N)
#endif
inline pipe_receive(q, h, p, v) {
  e = EIDX(q, p);
  if
  :: BEYOND(q, p) ->   /* beyond the Pipe's range: drop, NAK (it carries the cumulative ACK; the
                          sender retries on its timer, as after an RNR NAK) */
     printf("sw%d: psn %d from node %d beyond psnStart %d + N: drop, NAK\n", me, p, HSRC(h), psnStart[q]);
     send_ack(h)
  :: else ->
     if
     :: p < epsn[h] ->   /* CheckDuplicate: received before: ACK again */
        printf("sw%d: duplicate psn %d from node %d: ACK\n", me, p, HSRC(h));
        send_ack(h)
     :: p > epsn[h] ->   /* a gap on the hop: dropped, the sender times out and goes back N */
        printf("sw%d: psn %d from node %d out of sequence (expect %d), dropped\n", me, p, HSRC(h), epsn[h])
     :: p == epsn[h] ->  /* AggregateData, then ACK */
#if GHOST
        k = 1 << KBIT(h);
        assert(p >= psnStart[q] && p < psnStart[q] + PIPE_N);
        assert(eDeg[e] == 0 || ePsn[e] == p);   /* the entry is free, or already holds p */
        assert((eBm[e] & k) == 0);              /* this in-endpoint's first contribution to p */
        assert(eDeg[e] < fanin[q]);
        ePsn[e] = p; eBm[e] = eBm[e] | k;
#endif
        eVal[e] = eVal[e] + v; eDeg[e]++;
        epsn[h]++; fired = 0;
        printf("sw%d: psn %d += %d from node %d, degree %d/%d\n", me, p, v, HSRC(h), eDeg[e], fanin[q]);
        send_ack(h);
        if
        :: eDeg[e] == fanin[q] ->
#if GHOST
           assert(eBm[e] == fullBm[q]);
#endif
           complete(q, p)
        :: else
        fi
     fi
  fi;
  e = 0; k = 0
}

/* out-endpoint h of Pipe q gets ACK a from downstream (mode3: ACK handling): lastAcked moves,
 * psnStart = min(lastAcked over the out-endpoints) + 1, and the entries below it are recycled */
inline pipe_acked(q, h, a) {
  printf("sw%d: ACK %d from node %d\n", me, a, HDST(h));
  take_ack(h, a);
#if BUG == BUG_FASTEST_OUT
  m = 0;
#else
  m = NPKT;
#endif
  g = 0;
  do
  :: g < NHOP ->
     if
#if BUG == BUG_FASTEST_OUT
     :: outpipe[g] == q && una[g] > m -> m = una[g]
#else
     :: outpipe[g] == q && una[g] < m -> m = una[g]
#endif
     :: else
     fi;
     g++
  :: else -> break
  od;
  g = 0;
  if
  :: m > psnStart[q] ->
     printf("sw%d: psnStart %d -> %d\n", me, psnStart[q], m);
#if BUG != BUG_MODE2_RECYCLE
     do
     :: psnStart[q] < m ->   /* RecycleBuffer: every out-endpoint has acknowledged this PSN */
        e = EIDX(q, psnStart[q]);
#if GHOST
        assert(ePsn[e] == psnStart[q] && eDeg[e] == fanin[q]);   /* it is complete */
        eBm[e] = 0;
#endif
        eVal[e] = 0; eDeg[e] = 0;
        psnStart[q]++
     :: else -> break
     od;
     e = 0
#else
     psnStart[q] = m
#endif
  :: else
  fi;
  m = 0
}

/* ---- timers ------------------------------------------------------------------------------ */
#define RANK_SENDER(h) (IS_UP(h) && CHILD(h) < NR)
#define OUTSTANDING(h) (RANK_SENDER(h) -> una[h] < NPKT : una[h] < nxt[h])

/* hop h's sender times out: a rank goes back N from lastAcked + 1; a switch resends, from
 * lastAcked + 1 to maxPsnSent, every PSN whose aggregation is complete */
inline retransmit(h) {
  if
  :: RANK_SENDER(h) ->
     printf("r%d: timeout, go back to %d\n", me, una[h]);
     nxt[h] = una[h];
     transmit(h)
  :: else ->
     q = outpipe[h];
     printf("sw%d: timeout to node %d, resend %d..%d\n", me, HDST(h), una[h], nxt[h] - 1);
     p = una[h];
     do
     :: p < nxt[h] ->
        e = EIDX(q, p);
#if GHOST
        assert(eDeg[e] == 0 || ePsn[e] == p);   /* not recycled: p >= lastAcked + 1 >= psnStart */
#endif
        if
        :: eDeg[e] == fanin[q] ->
           printf("sw%d: psn %d = %d -> node %d again\n", me, p, eVal[e], HDST(h));
           SEND(h, p, eVal[e])
        :: else
        fi;
        p++
     :: else -> break
     od;
     p = 0; q = 0; e = 0
  fi
}

/* the regular timeout of hop H's sender (kind 1), or a premature one (kind 2, a fault) */
#define TPICK(H) \
  :: (H) < NHOP && used[H] && OUTSTANDING(H) && inflight == 0 && (fired & (1 << (H))) == 0 -> \
     h = H; kind = 1 \
  :: (H) < NHOP && used[H] && OUTSTANDING(H) && inflight > 0 && spurLeft > 0 -> h = H; kind = 2

proctype Timers() {
  byte me, h, p, q, e, kind;
end:
  do
  :: atomic {
       if
       TPICK(0) TPICK(1) TPICK(2) TPICK(3) TPICK(4) TPICK(5) TPICK(6) TPICK(7) TPICK(8) TPICK(9)
       fi;
       if
       :: kind == 1 -> fired = fired | (1 << h)
       :: kind == 2 -> spurLeft--; fired = 0; printf("  (premature timeout)\n")
       fi;
       me = HSRC(h);
       retransmit(h);
       me = 0; h = 0; kind = 0
     }
  od
}

/* ---- nodes: receive any packet in flight to this node ------------------------------------- */
#define K_DATA 1
#define K_ACK 2
#define PICKD(H, P) \
  :: (H) < NHOP && (P) < NPKT && HDST(H) == me && dCnt[DIDX(H, P)] > 0 && MAY_DELIVER(H, P) -> \
     kind = K_DATA; h = H; p = P
#define PICKA(H, A) \
  :: (H) < NHOP && (A) <= NPKT && HSRC(H) == me && ackIn[AIDX(H, A)] -> kind = K_ACK; h = H; p = A
#define PICK(H) \
  PICKD(H, 0) PICKD(H, 1) PICKD(H, 2) PICKD(H, 3) PICKD(H, 4) PICKD(H, 5) \
  PICKA(H, 1) PICKA(H, 2) PICKA(H, 3) PICKA(H, 4) PICKA(H, 5) PICKA(H, 6)

proctype Node(byte me) {
  byte h, p, v, kind, q, e, k, g, m;
end:
  do
  :: atomic {
       pend[me] > 0 ->
       if
       PICK(0) PICK(1) PICK(2) PICK(3) PICK(4) PICK(5) PICK(6) PICK(7) PICK(8) PICK(9)
       fi;
       if
       :: kind == K_DATA ->
          CHARGE(h, p); TAKE(h, p, v);
          if
          :: me < NR -> rank_result(h, p, v)
          :: else -> q = inpipe[h]; pipe_receive(q, h, p, v)
          fi
       :: kind == K_ACK ->
          if
          :: me < NR ->
             printf("r%d: uploads < %d acknowledged\n", me, p);
             take_ack(h, p);
             if :: nxt[h] < p -> nxt[h] = p :: else fi;
             transmit(h)
          :: else -> q = outpipe[h]; pipe_acked(q, h, p)
          fi
       fi;
       h = 0; p = 0; v = 0; kind = 0; q = 0
     }
  od
}

/* ---- termination ---------------------------------------------------------------------------- */
/* If the system stops (no process can move) before ALLDONE, this process is blocked away from
 * an end label: spin reports an invalid end state. Runs are finite (see `fired`), so this is
 * the termination check. Once done: every receiving rank has every result, and every Pipe is
 * drained (psnStart = NPKT, every entry recycled). */
proctype Watch() {
  byte i;
  ALLDONE;
  do
  :: i < NHOP ->
     assert(!used[i] || una[i] == NPKT);
     if :: used[i] && !IS_UP(i) && CHILD(i) < NR -> assert(epsn[i] == NPKT) :: else fi; i++
  :: else -> break
  od;
  i = 0;
  do
  :: i < NPIPE ->
     assert(fanin[i] == 0 || psnStart[i] == NPKT); i++
  :: else -> break
  od;
  i = 0;
#if BUG != BUG_MODE2_RECYCLE
  /* (Mode-II's rule leaves the last MW entries of a collective to the next one's PSNs) */
  do
  :: i < NPIPE * PIPE_N -> assert(eDeg[i] == 0); i++
  :: else -> break
  od
#endif
}

init {
  byte me, h, i;
  atomic {
    i = 0; hopsLeft = 0;
    do
    :: i < NHOP ->   /* the shape: used hops, the Pipe each feeds or drains, fan-in */
       inpipe[i] = NONE; outpipe[i] = NONE;
       if
       :: USED(i) ->
          used[i] = 1; hopsLeft++;
          if
          :: HDST(i) >= NR ->
             inpipe[i] = INPIPE(i); fanin[INPIPE(i)]++;
#if GHOST
             fullBm[INPIPE(i)] = fullBm[INPIPE(i)] | (1 << KBIT(i));
#endif
             skip
          :: else
          fi;
          if :: HSRC(i) >= NR -> outpipe[i] = OUTPIPE(i) :: else fi
       :: else
       fi;
       i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NR ->   /* every sending rank transmits its first window */
       if :: SENDS(i) -> me = i; h = UP(i); transmit(h) :: else fi;
       i++
    :: else -> break
    od;
    me = 0; h = 0;
    i = 0;
    do
    :: i < NNODE -> run Node(i); i++
    :: else -> break
    od;
    run Timers();
    run Watch();
    i = 0
  }
}

/* the same termination property as an LTL formula, for the nested-DFS check (pan -a) */
ltl terminates { <> ALLDONE }
