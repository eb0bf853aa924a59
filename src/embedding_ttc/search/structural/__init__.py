"""An LLM-free proposer that composes and mutates programs from the project's primitives.

A program here is a small *genome* rendered as an ordinary program file (a module docstring,
imports of numpy and ``embedding_ttc.programs.primitives.*`` only, a few module constants,
helpers written from numpy and the primitives, and ``def program(Q, D, S, ctx)``):

* **channels** (2 to ``genome.MAX_CHANNELS``), each a score matrix: the dense cosine ``S``;
  the reversed perspective (documents encoded under ``retrieval.query`` at index time);
  cross-adapter ``text-matching`` views; a Matryoshka half-dimension cosine; MaxSim or
  TopMeanSim over sentences, sentence pairs or paragraphs (chunks encoded under
  ``retrieval.passage`` at index time, at most ``MAX_CHUNKS_PER_DOC`` per document); BM25,
  word-bigram overlap, query-term coverage, rare-term IDF; a pseudo-relevance-feedback query
  (Rocchio, SoftCentroid or VPRF over ``S``) rescored against ``D``; and candidate-local
  statistics computed from each query's candidates and ``D`` alone, with no encode: a
  document's consensus with the query's dense top-K (its cosine to their centroid) and its
  distance from the centroid of the query's candidates (a hubness correction);
* a **normalisation** per channel (``genome.NORMALISATIONS``): none, row z-score, column
  z-score, both (columns first), per-query min-max over the query's candidates, or a
  candidate-local z-score whose statistics are those of the query's top ``LOCAL_K`` candidates
  under ``S`` (the rest clipped to that head's range; module ``normalise``);
* a **fusion** (``genome.FUSIONS``): reciprocal rank fusion (k = 60), a sum of row z-scores,
  a weighted sum (first channel 1.0, the others ``render.AUX_WEIGHT``), or a convex
  combination whose ``share`` gene (``genome.SHARES``: 0.1 to 0.9) is the total weight of the
  channels after the first (the dense cosine when present), written as the program's
  ``FUSION_SHARE`` constant;
* **feedback rounds** (0 to ``genome.MAX_ROUNDS``): take each query's fused top-K, refine the
  query (``genome.REFINEMENTS``: Rocchio, SoftCentroid or VPRF), rescore ``D`` and fuse again
  (by RRF after RRF, else by a sum of row z-scores), whatever the channels' normalisations.

Every ranking, statistic and selection uses each query's candidates only (the candidate mask
convention of ``primitives.scores``), and non-candidates score 0. Every constant is written in
the program and none is fitted.

Generation 1 writes the simple genome ``genome.BASE_GENOME`` (dense + BM25 by RRF). Later
generations take the genome of the best frontier program that has one (written in its header
as a ``Genome: {...}`` JSON line) and apply structural mutations (add, remove or swap a
channel, add or drop a candidate-local channel, change a chunk channel's granularity or
pooling, change the fusion, move the convex share one grid step, add or remove a feedback
round, change the refinement or a normalisation) until the result is new: not a
genome tried before (the history's novelty claims carry a ``[genome ...]`` tag and the loop
records structural fingerprints) and structurally distinct from the frontier sources, the
evaluated structural programs and the library (normalised-AST similarity below the threshold
of constraint 5, the same check the loop applies; it abstracts constants, so a share step
lands only beside a structural change). Choices are drawn from a generator seeded
by the proposer's seed, the run's seed, the generation and a digest of the history, so a
proposal is reproducible.

The modules, each building on the ones before it:

* ``builder``: the text of a program as it is built (imports, constants, helpers, body);
* ``catalogue``: the channel catalogue and the code of each channel;
* ``genome``: the genome, its canonical, key and JSON forms, and the base genome (genes
  added later are written only where they apply, so earlier genomes keep their forms and
  render to the same program text);
* ``normalise``: the normalisations and the code of each;
* ``render``: a genome as a program file (channels, fusion, feedback rounds);
* ``mutate``: the structural mutations;
* ``known``: what the history has tried, the novelty test, and stacking mutations until new;
* ``edits``: one chosen edit of a genome, as a JSON schema and applied (the guided proposer's);
* ``proposer``: ``StructuralProposer``, which searches for a new genome.
"""
