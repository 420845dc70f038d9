/*
 * EPIC Mode-II (connection translated) AllReduce, a Promela model for spin.
 * docs/model-mode2.md maps it to the IncEngine modules; tests/model/run_spin.sh runs it.
 *
 * Parameters (cpp macros: spin -a -DNAME=value mode2.pml):
 *   NR           ranks, 2..4
 *   TWO_LEVEL    0: one switch (the root) with the NR ranks as children;
 *                1: leaf 0 serves ranks 0..H-1, leaf 1 ranks H..NR-1 (H = (NR+1)/2), the
 *                   root has the two leaves as children
 *   MW           the ranks' send window in packets (2)
 *   NSLOT        payload/degree slots per switch and group (2*MW)
 *   NPKT         packets (PSNs 0..NPKT-1) each rank contributes, at most 8; NPKT > NSLOT
 *                makes PSNs reuse slots, so RecycleBuffer matters
 *   MAXLOSS      packets lost in the whole run (any link, any kind of packet)
 *   MAXDUP       packets duplicated in the whole run
 *   REORDER      reorder events in the whole run (see MAY_DELIVER); < 0: links are bags
 *   MAXSPUR      premature retransmission timeouts in the whole run
 *   INSTANT_ACK  0: the reflected ACK is a packet in flight like any other;
 *                1: it reaches the rank in the same step as the result it acknowledges
 *                   (or is lost): a smaller state space for the larger configurations
 *   NAK          1: a rank that receives a result beyond the one it expects sends one
 *                NAK-sequence-error, reflected like an ACK, and goes back N on it
 *   GHOST        1: also assert why RecycleBuffer is safe, using global knowledge no switch
 *                has (the slot it clears is finished and every rank has its result)
 *   BUG          0: the protocol as the engine implements it; otherwise a deliberately
 *                wrong rule, for which spin must find a violation (negative controls):
 *     1 WRONG_RECYCLE    RecycleBuffer frees slot (p+MW+1) % NSLOT, i.e. PSN p-MW+1 (off by one)
 *     2 NO_DUPCHECK      CheckDuplicate skipped: a retransmitted upload is aggregated again
 *     3 UNRESERVED_FREE  an empty (recycled) slot is claimed by an upload of ANY PSN that maps
 *                        to it, also an older one (the engine claims only for a newer PSN)
 *     4 STORE_STALE      a non-root switch stores every result from its parent, also a stale
 *                        copy for a PSN whose slot has been recycled
 *
 * Replaying a trail (spin -t -DNAME=value ... mode2.pml) prints the protocol events.
 */

#ifndef NR
#define NR 3
#endif
#ifndef TWO_LEVEL
#define TWO_LEVEL 0
#endif
#ifndef MW
#define MW 2
#endif
#ifndef NSLOT
#define NSLOT (2 * MW)
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
#ifndef INSTANT_ACK
#define INSTANT_ACK 0
#endif
#ifndef NAK
#define NAK 0
#endif
#ifndef GHOST
#define GHOST 1
#endif
#ifndef BUG
#define BUG 0
#endif
/* copies of one (link, kind, PSN) in flight at once; more is reported as an error */
#ifndef CAP
#define CAP 4
#endif

#define BUG_WRONG_RECYCLE 1
#define BUG_NO_DUPCHECK 2
#define BUG_UNRESERVED_FREE 3
#define BUG_STORE_STALE 4

/* RecycleBuffer frees the slot of PSN p - RBACK when p completes */
#if BUG == BUG_WRONG_RECYCLE
#define RBACK (MW - 1)
#else
#define RBACK MW
#endif

/* ---- tree -------------------------------------------------------------------------------- */
/* Node ids: ranks 0..NR-1, then the switches; the root is the last node. Every node but the
 * root has one link to its parent, named by the child's node id. CIDX: the child's index at
 * its parent (its bit in the parent's bitmap). */
#if TWO_LEVEL
#define NSW 3
#define HALF ((NR + 1) / 2)
#define LEAF0 NR
#define LEAF1 (NR + 1)
#define ROOT (NR + 2)
#define PARENT(n) ((n) < HALF -> LEAF0 : ((n) < NR -> LEAF1 : ROOT))
#define CIDX(n) ((n) < HALF -> (n) : ((n) < NR -> (n) - HALF : (n) - LEAF0))
#define FANIN(s) ((s) == LEAF0 -> HALF : ((s) == LEAF1 -> NR - HALF : 2))
#else
#define NSW 1
#define ROOT NR
#define PARENT(n) ROOT
#define CIDX(n) (n)
#define FANIN(s) NR
#endif
#define NNODE (NR + NSW)
#define NLINK (NNODE - 1)
#define FULL(s) ((1 << FANIN(s)) - 1)

/* ---- data -------------------------------------------------------------------------------- */
/* Rank r's input for PSN p: one base-4 digit per rank, so a contribution added twice shows in
 * the sum, times a factor of the PSN, so a contribution added to the wrong PSN shows too. */
#define INPUT(r, p) ((1 << (2 * (r))) * (1 + (p) % 3))
#if NR == 2
#define SUMW 5
#elif NR == 3
#define SUMW 21
#else
#define SUMW 85
#endif
#define EXPECTED(p) (SUMW * (1 + (p) % 3))

/* ---- ranks ------------------------------------------------------------------------------- */
byte sndUna[NR];  /* oldest unacknowledged upload PSN (uploads < sndUna are acknowledged) */
byte sndNxt[NR];  /* next upload PSN to (re)transmit */
byte rcvNxt[NR];  /* next result PSN expected; results are accepted in order only */
#if NAK
bit nakSent[NR];  /* one NAK per sequence error, as an RC responder does */
#endif
/* end of rank r's window: it may send PSN p only when p < sndUna + MW (and p < NPKT) */
#define WEND(r) (sndUna[r] + MW < NPKT -> sndUna[r] + MW : NPKT)

#if NR == 2
#define ALLDONE (sndUna[0] == NPKT && sndUna[1] == NPKT)
#define ACKED_BY_ALL(q) (sndUna[0] > (q) && sndUna[1] > (q))
#elif NR == 3
#define ALLDONE (sndUna[0] == NPKT && sndUna[1] == NPKT && sndUna[2] == NPKT)
#define ACKED_BY_ALL(q) (sndUna[0] > (q) && sndUna[1] > (q) && sndUna[2] > (q))
#else
#define ALLDONE (sndUna[0] == NPKT && sndUna[1] == NPKT && sndUna[2] == NPKT && sndUna[3] == NPKT)
#define ACKED_BY_ALL(q) (sndUna[0] > (q) && sndUna[1] > (q) && sndUna[2] > (q) && sndUna[3] > (q))
#endif

/* ---- switches: the computation state of the group at each switch ------------------------ */
/* engine::Slot (datapath/engine/slot.h): PSN p uses slot p mod NSLOT */
#define S_EMPTY 0     /* kEmpty: never used, or recycled (slotPsn keeps the PSN it held) */
#define S_AGG 1       /* kAggregating: contributions arriving */
#define S_SENTUP 2    /* kSentUp: non-root, partial aggregate sent up, result not back yet */
#define S_COMPLETE 3  /* kComplete: result known (aggregated at the root, or from the parent) */

#define SIDX(s, p) (((s) - NR) * NSLOT + (p) % NSLOT)
bit slotUsed[NSW * NSLOT];  /* held a PSN at least once */
byte slotPsn[NSW * NSLOT];  /* the PSN it holds, or held last (kept when recycled) */
byte slotSt[NSW * NSLOT];
byte slotBm[NSW * NSLOT];   /* bitmap of the children that contributed (CheckDuplicate) */
byte slotDeg[NSW * NSLOT];  /* degree: contributions added (AggregateData) */
byte slotVal[NSW * NSLOT];  /* accumulator, then the result (kept for re-sending) */

/* ---- network ------------------------------------------------------------------------------ */
/* Each link holds a multiset of packets, counted per (link, PSN); all copies of one PSN carry
 * one payload (asserted: RoCE retransmissions must be identical). */
#define UIDX(l, p) ((l) * NPKT + (p))
#define AIDX(r, a) ((r) * (NPKT + 1) + (a))
byte upCnt[NLINK * NPKT];  /* child -> parent: a rank's upload, or a switch's partial aggregate */
byte upVal[NLINK * NPKT];
byte dnCnt[NLINK * NPKT];  /* parent -> child: the result */
byte dnVal[NLINK * NPKT];
/* ACK reflection: rank r's cumulative ACK of the results (value: next expected PSN) goes to
 * its first-hop switch, which returns it to r as the ACK of r's uploads. The reflection
 * keeps no state, so the round trip is one lossy link here; and since ACKs are cumulative and
 * idempotent, in-flight ACKs are a set, and one that acknowledges nothing new is not kept. */
bit ackIn[NR * (NPKT + 1)];
#if NAK
byte nakCnt[NR * (NPKT + 1)];  /* NAK-sequence-error (value: expected PSN), reflected too */
#endif
byte pend[NNODE];  /* packets waiting at each node (derived from the counts) */
byte inflight;     /* packets in flight anywhere (derived) */

/* ---- faults ------------------------------------------------------------------------------ */
byte lossLeft = MAXLOSS;
byte dupLeft = MAXDUP;
byte spurLeft = MAXSPUR;
/* Reordering: delivering a packet while a lower PSN of the same kind is in flight on the same
 * link is a reorder event (links are otherwise in PSN order). REORDER >= 0 bounds the events
 * in the whole run; REORDER < 0 makes every link a bag (any packet may be delivered next). */
#if REORDER >= 0
byte reorderLeft = REORDER;
#define MAY_DELIVER(CNT, l, P) (reorderLeft > 0 || NONE_BELOW(CNT, l, P))
#define CHARGE(CNT, l, p) \
  if \
  :: !NONE_BELOW(CNT, l, p) -> reorderLeft--; fired = 0; \
     printf("  (reorder: psn %d overtakes a lower psn on link %d)\n", p, l) \
  :: else \
  fi
#else
#define MAY_DELIVER(CNT, l, P) true
#define CHARGE(CNT, l, p) skip
#endif
#define NB1(CNT, l, P, q) ((P) <= (q) || CNT[UIDX(l, q)] == 0)
#define NONE_BELOW(CNT, l, P) (NB1(CNT, l, P, 0) && NB1(CNT, l, P, 1) && NB1(CNT, l, P, 2) && \
  NB1(CNT, l, P, 3) && NB1(CNT, l, P, 4) && NB1(CNT, l, P, 5) && NB1(CNT, l, P, 6))

/* Retransmission timeouts. A rank's timer that expires while packets are in flight is
 * premature: a bounded fault (MAXSPUR). The timeout that recovers from loss fires when nothing
 * is in flight (every rank has sent what its window allows, every switch is idle) and the rank
 * has unacknowledged uploads: it goes back N. Bit r of `fired`: rank r has timed out since the
 * last change that can happen only finitely often (a contribution aggregated, a result stored
 * or accepted, an ACK that slides a window, a fault); it does not time out again before such a
 * change. So every run is finite, and a run that stops before every rank is done is a real
 * livelock: each rank has retransmitted its window and nothing moved. */
byte fired;

/* ---- link primitives (cpp macros: Promela inlines cannot take arrays) -------------------- */
#define PUT1(CNT, VAL, x, v, dst) \
  assert(CNT[x] == 0 || VAL[x] == (v)); assert(CNT[x] < CAP); \
  CNT[x]++; VAL[x] = (v); pend[dst]++; inflight++
/* a lossy, duplicating link: the packet is lost, delivered twice, or delivered once */
#define SEND(CNT, VAL, x, v, dst) \
  if \
  :: lossLeft > 0 -> lossLeft--; fired = 0; printf("  (lost)\n") \
  :: dupLeft > 0 -> dupLeft--; fired = 0; printf("  (duplicated)\n"); \
     PUT1(CNT, VAL, x, v, dst); PUT1(CNT, VAL, x, v, dst) \
  :: true -> PUT1(CNT, VAL, x, v, dst) \
  fi
#define TAKE(CNT, VAL, x, v, dst) \
  v = VAL[x]; CNT[x]--; \
  if :: CNT[x] == 0 -> VAL[x] = 0 :: else fi; \
  pend[dst]--; inflight--

/* ---- IncEngine, computation state ----------------------------------------------------------- */

/* RecycleBuffer (EPIC's rule, recycle_completed, recycle_buffer.cc): PSN p is complete at switch s
 * (root: aggregated; non-root: result received). The slot of p-MW, which is slot
 * (p+MW) % 2MW, becomes empty, keeping its PSN. Why that is safe: every rank has sent p, so
 * every rank's window has passed p-MW (checked here with GHOST). Only a slot that still holds
 * p-MW is touched. */
inline recycle_buffer(s, p) {
  if
  :: p >= RBACK ->
     j = SIDX(s, p - RBACK);
#if GHOST
     assert(slotUsed[j] && slotPsn[j] == p - RBACK);  /* it holds p-MW ... */
     assert(slotSt[j] == S_COMPLETE);   /* ... finished: no aggregation in progress is lost */
     assert(ACKED_BY_ALL(p - RBACK));   /* ... and no rank can still need its result */
#endif
     if
     :: slotUsed[j] && slotSt[j] != S_EMPTY && slotPsn[j] == p - RBACK ->
        printf("sw%d: recycle slot %d (psn %d)\n", s, j % NSLOT, slotPsn[j]);
        slotSt[j] = S_EMPTY; slotBm[j] = 0; slotDeg[j] = 0; slotVal[j] = 0
     :: else
     fi
  :: else   /* p-MW precedes the first PSN */
  fi
}

/* ReplicateData (+ TranslateHeader per child): the result for p to every child of s */
inline replicate_data(s, p, v) {
  n = 0;
  do
  :: n < NLINK ->
     if
     :: PARENT(n) == s -> printf("sw%d: result psn %d = %d -> node %d\n", s, p, v, n);
        SEND(dnCnt, dnVal, UIDX(n, p), v, n)
     :: else
     fi;
     n++
  :: else -> break
  od
}

/* upward: switch s receives the upload (or partial aggregate) p with payload v from child c
 * (mode2.cc upward: check_duplicate, aggregate_data) */
inline upward(s, c, p, v) {
  i = SIDX(s, p);
  k = 1 << CIDX(c);
  if   /* an empty slot is claimed by a PSN newer than the one it held */
#if BUG == BUG_UNRESERVED_FREE
  :: slotSt[i] == S_EMPTY ->
#else
  :: slotSt[i] == S_EMPTY && (!slotUsed[i] || p > slotPsn[i]) ->
#endif
#if GHOST
     assert(!slotUsed[i] || p == slotPsn[i] + NSLOT);   /* the slot's next PSN, none skipped */
#endif
     printf("sw%d: psn %d claims slot %d\n", s, p, i % NSLOT);
     slotUsed[i] = 1; slotPsn[i] = p; slotSt[i] = S_AGG
  :: else
  fi;
  if
  :: slotSt[i] == S_EMPTY || slotPsn[i] != p ->
     if
     :: p > slotPsn[i] ->   /* upward_slot_busy: the slot still holds an older PSN, so c sent p
                               before p-MW completed here: the recycle rule is wrong */
        printf("sw%d: psn %d from node %d finds slot %d still holding psn %d\n", s, p, c, i % NSLOT, slotPsn[i]);
        assert(false)
     :: else ->             /* upward_stale: a late copy of a PSN whose slot was recycled: drop */
        printf("sw%d: drop stale psn %d from node %d (slot holds psn %d)\n", s, p, c, slotPsn[i])
     fi
  :: else ->
     if
#if BUG != BUG_NO_DUPCHECK
     :: slotBm[i] & k ->   /* CheckDuplicate: c has already contributed to p */
        if
        :: slotSt[i] == S_COMPLETE ->   /* the result again, to c only */
           printf("sw%d: duplicate psn %d from node %d: result again\n", s, p, c);
           SEND(dnCnt, dnVal, UIDX(c, p), slotVal[i], c)
        :: slotSt[i] == S_SENTUP ->     /* the partial aggregate again, to the parent */
           printf("sw%d: duplicate psn %d from node %d: partial again\n", s, p, c);
           SEND(upCnt, upVal, UIDX(s, p), slotVal[i], PARENT(s))
        :: slotSt[i] == S_AGG ->        /* others still missing (the engine: RNR NAK) */
           printf("sw%d: duplicate psn %d from node %d: drop\n", s, p, c)
        fi
#endif
     :: else ->            /* AggregateData */
        assert((slotBm[i] & k) == 0);   /* each contribution is added exactly once */
        assert(slotSt[i] == S_AGG);
        slotVal[i] = slotVal[i] + v;
        slotBm[i] = slotBm[i] | k;
        slotDeg[i]++;
        fired = 0;
        printf("sw%d: psn %d += %d from node %d, degree %d/%d\n", s, p, v, c, slotDeg[i], FANIN(s));
        if
        :: slotDeg[i] == FANIN(s) ->
           assert(slotBm[i] == FULL(s));
           if
           :: s == ROOT ->
              slotSt[i] = S_COMPLETE;
              v = slotVal[i];
              replicate_data(s, p, v);
              recycle_buffer(s, p)
           :: else ->
              slotSt[i] = S_SENTUP;
              printf("sw%d: partial psn %d = %d -> parent\n", s, p, slotVal[i]);
              SEND(upCnt, upVal, UIDX(s, p), slotVal[i], PARENT(s))
           fi
        :: else -> assert(slotDeg[i] < FANIN(s))
        fi
     fi
  fi
}

/* downward, at a non-root switch: the result for p arrives from the parent
 * (mode2.cc downward) */
inline downward(s, p, v) {
  i = SIDX(s, p);
#if BUG == BUG_STORE_STALE
  if
  :: slotSt[i] == S_COMPLETE && slotPsn[i] == p -> replicate_data(s, p, v)
  :: else ->
     printf("sw%d: store result psn %d = %d\n", s, p, v);
     if :: slotSt[i] == S_SENTUP && slotPsn[i] == p -> recycle_buffer(s, p) :: else fi;
     slotUsed[i] = 1; slotPsn[i] = p; slotVal[i] = v; slotSt[i] = S_COMPLETE; fired = 0;
     replicate_data(s, p, v)
  fi
#else
  if
  :: slotPsn[i] == p && slotSt[i] == S_SENTUP ->    /* first copy: store, replicate, recycle */
     printf("sw%d: store result psn %d = %d\n", s, p, v);
     slotVal[i] = v; slotSt[i] = S_COMPLETE; fired = 0;
     replicate_data(s, p, v);
     recycle_buffer(s, p)
  :: slotPsn[i] == p && slotSt[i] == S_COMPLETE ->  /* a duplicate: forward it again */
     assert(slotVal[i] == v);
     replicate_data(s, p, v)
  :: else ->                                        /* downward_unexpected: drop */
     /* a result for p before this switch sent its partial for p up, or while the slot still
      * holds an older PSN: impossible */
     assert(!(slotUsed[i] && slotPsn[i] == p && slotSt[i] == S_AGG));
     assert(slotUsed[i] && slotPsn[i] >= p);
     printf("sw%d: drop stale result psn %d (slot holds psn %d)\n", s, p, slotPsn[i])
  fi
#endif
}

/* ---- ranks: RC requester for the uploads, RC responder for the results ------------------ */

/* rank r transmits every upload its window allows, at once (a later transmission is the same
 * packet delayed on the link, which the link model covers) */
inline transmit(r) {
  do
  :: sndNxt[r] < WEND(r) ->
     printf("r%d: upload psn %d = %d\n", r, sndNxt[r], INPUT(r, sndNxt[r]));
     SEND(upCnt, upVal, UIDX(r, sndNxt[r]), INPUT(r, sndNxt[r]), PARENT(r));
     sndNxt[r]++
  :: else -> break
  od
}
/* go-back-N: retransmit from the oldest unacknowledged upload */
inline go_back(r) {
  if :: sndUna[r] < NPKT -> sndNxt[r] = sndUna[r]; transmit(r) :: else fi
}
/* the reflected ACK a reaches rank r: its uploads < a are acknowledged and its window slides;
 * ACKs still in flight that acknowledge no more than a are now no-ops: dropped */
inline ack_uploads(r, a) {
  printf("r%d: uploads < %d acknowledged\n", r, a);
  sndUna[r] = a; fired = 0;
  if :: sndNxt[r] < a -> sndNxt[r] = a :: else fi;
  transmit(r);
#if !INSTANT_ACK
  k = 1;
  do
  :: k <= a -> if :: ackIn[AIDX(r, k)] -> ackIn[AIDX(r, k)] = 0; pend[r]--; inflight-- :: else fi; k++
  :: else -> break
  od;
  k = 0
#endif
}
/* rank r acknowledges the results it has (cumulative: PSNs < rcvNxt); its first-hop switch
 * reflects the ACK back to r as the ACK of r's uploads */
inline send_ack(r) {
  if
  :: rcvNxt[r] <= sndUna[r] -> skip   /* acknowledges nothing new */
#if !INSTANT_ACK
  :: rcvNxt[r] > sndUna[r] && ackIn[AIDX(r, rcvNxt[r])] -> skip   /* already in flight */
#endif
  :: else ->
     printf("r%d: ACK %d\n", r, rcvNxt[r]);
     if
     :: lossLeft > 0 -> lossLeft--; fired = 0; printf("  (lost)\n")
#if INSTANT_ACK
     :: true -> ack_uploads(r, rcvNxt[r])
#else
     :: true -> ackIn[AIDX(r, rcvNxt[r])] = 1; pend[r]++; inflight++
#endif
     fi
  fi
}

#define K_DATA 0
#define K_ACK 1
#define K_RES 2
#define K_NAK 3

#if NAK
#define RPICK_NAK(P) :: (P) <= NPKT && nakCnt[AIDX(r, P)] > 0 -> kind = K_NAK; p = P
#else
#define RPICK_NAK(P)
#endif
#define RPICK(P) \
  :: (P) < NPKT && dnCnt[UIDX(r, P)] > 0 && MAY_DELIVER(dnCnt, r, P) -> kind = K_RES; p = P \
  :: (P) <= NPKT && ackIn[AIDX(r, P)] -> kind = K_ACK; p = P \
  RPICK_NAK(P)

proctype Rank(byte r) {
  byte p, v, kind, k;
end:
  do
  :: atomic {   /* receive any packet in flight to this rank */
       pend[r] > 0 ->
       if
       RPICK(0) RPICK(1) RPICK(2) RPICK(3) RPICK(4) RPICK(5) RPICK(6) RPICK(7) RPICK(8)
       fi;
       if
       :: kind == K_RES ->
          CHARGE(dnCnt, r, p); TAKE(dnCnt, dnVal, UIDX(r, p), v, r);
          assert(v == EXPECTED(p));   /* every result is the reduction of all ranks' inputs */
          if
          :: p == rcvNxt[r] ->
             printf("r%d: result psn %d = %d accepted\n", r, p, v);
             rcvNxt[r]++; fired = 0;
#if NAK
             nakSent[r] = 0;
#endif
             send_ack(r)
          :: p < rcvNxt[r] ->   /* a duplicate: ACK again */
             printf("r%d: result psn %d again\n", r, p);
             send_ack(r)
          :: p > rcvNxt[r] ->   /* out of sequence: dropped */
             printf("r%d: result psn %d out of sequence (expect %d), dropped\n", r, p, rcvNxt[r]);
#if NAK
             if
             :: !nakSent[r] ->
                nakSent[r] = 1;
                if
                :: lossLeft > 0 -> lossLeft--; fired = 0
                :: true -> assert(nakCnt[AIDX(r, rcvNxt[r])] < CAP);
                   nakCnt[AIDX(r, rcvNxt[r])]++; pend[r]++; inflight++
                fi
             :: else
             fi
#else
             skip
#endif
          fi
       :: kind == K_ACK ->   /* the reflected ACK: uploads < p are acknowledged */
          ackIn[AIDX(r, p)] = 0; pend[r]--; inflight--;
          assert(p <= rcvNxt[r] && p > sndUna[r]);
          ack_uploads(r, p)
#if NAK
       :: kind == K_NAK ->   /* the reflected NAK: acknowledges < p, go back N */
          nakCnt[AIDX(r, p)]--; pend[r]--; inflight--;
          printf("r%d: NAK %d\n", r, p);
          if :: p > sndUna[r] -> ack_uploads(r, p) :: else fi;
          go_back(r)
#endif
       fi;
       p = 0; v = 0; kind = 0
     }
  :: atomic {   /* a premature retransmission timeout (bounded fault) */
       spurLeft > 0 && sndUna[r] < NPKT ->
       spurLeft--; fired = 0;
       printf("r%d: premature timeout, go back to %d\n", r, sndUna[r]);
       go_back(r)
     }
  :: atomic {   /* the retransmission timeout that recovers from loss (see `fired`) */
       inflight == 0 && sndUna[r] < NPKT && (fired & (1 << r)) == 0 ->
       fired = fired | (1 << r);
       printf("r%d: timeout, go back to %d\n", r, sndUna[r]);
       go_back(r)
     }
  od
}

/* ---- switches: one IncEngine context each ------------------------------------------------- */
#define SPICK_UP(L, P) \
  :: (L) < NLINK && (P) < NPKT && PARENT(L) == s && upCnt[UIDX(L, P)] > 0 && \
     MAY_DELIVER(upCnt, L, P) -> kind = K_DATA; c = L; p = P
#define SPICK_L(L) \
  SPICK_UP(L, 0) SPICK_UP(L, 1) SPICK_UP(L, 2) SPICK_UP(L, 3) \
  SPICK_UP(L, 4) SPICK_UP(L, 5) SPICK_UP(L, 6) SPICK_UP(L, 7)
#define SPICK_RES(P) \
  :: s != ROOT && (P) < NPKT && dnCnt[UIDX(s, P)] > 0 && MAY_DELIVER(dnCnt, s, P) -> \
     kind = K_RES; p = P

proctype Switch(byte s) {
  byte c, p, v, kind, i, j, k, n;
end:
  do
  :: atomic {   /* receive any packet in flight to this switch */
       pend[s] > 0 ->
       if
       SPICK_L(0) SPICK_L(1) SPICK_L(2) SPICK_L(3) SPICK_L(4) SPICK_L(5)
       SPICK_RES(0) SPICK_RES(1) SPICK_RES(2) SPICK_RES(3)
       SPICK_RES(4) SPICK_RES(5) SPICK_RES(6) SPICK_RES(7)
       fi;
       if
       :: kind == K_DATA ->
          CHARGE(upCnt, c, p); TAKE(upCnt, upVal, UIDX(c, p), v, s); upward(s, c, p, v)
       :: kind == K_RES ->
          CHARGE(dnCnt, s, p); TAKE(dnCnt, dnVal, UIDX(s, p), v, s); downward(s, p, v)
       fi;
       c = 0; p = 0; v = 0; kind = 0; i = 0; j = 0; k = 0; n = 0
     }
  od
}

/* ---- termination ---------------------------------------------------------------------------- */
/* If the system stops (no process can move) before every rank has every result and every
 * upload acknowledged, this process is blocked away from an end label: spin reports an
 * invalid end state. Runs are finite (see `fired`), so this is the termination check. */
proctype Watch() {
  byte r;
  ALLDONE;
  do
  :: r < NR -> assert(rcvNxt[r] == NPKT && sndNxt[r] == NPKT); r++
  :: else -> break
  od
}

init {
  byte s, i;
  atomic {
    s = NR;
    do
    :: s < NNODE ->
       i = 0;
       do
       :: i < NSLOT -> slotSt[SIDX(s, i)] = S_EMPTY; i++
       :: else -> break
       od;
       s++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NR -> transmit(i); run Rank(i); i++
    :: else -> break
    od;
    s = NR;
    do
    :: s < NNODE -> run Switch(s); s++
    :: else -> break
    od;
    run Watch();
    s = 0; i = 0
  }
}

/* the same termination property as an LTL formula, for the nested-DFS check (pan -a) */
ltl terminates { <> ALLDONE }
