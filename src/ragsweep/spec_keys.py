"""The spec's keys in brief, for ``ragsweep validate --help`` (README.md has the full reference)."""

SPEC_KEYS = """\
\b
Spec keys (README.md has the full reference):
  name, seed, output_dir, cache_dir
  dataset: {corpus: {format: demo|folder|jsonl|legalbench|squad, path, ...; folder: extensions,
                     recursive, on_unreadable: error|skip},
            questions: {format: demo|jsonl|csv|labelled_rag|legalbench|squad, path, ...},
            unlocated_evidence: error|drop_question|keep_question, fuzzy_evidence: 0-1,
            duplicate_evidence: all_copies|first, negatives: FILE.jsonl (appended, ids neg-...)}
  splitters: [{kind: token|sentence|recursive|semantic|pattern, chunk_size, chunk_overlap, name, ...}
              | {kind: sentence_window, window_size} | {kind: hierarchical, chunk_sizes, chunk_overlap}]
             (any splitter: context: none|title|title_headings|llm, the prefix embedded and BM25-indexed;
              llm: {kind: llm, document_tokens, head_tokens, max_tokens, title, prompt_file, llm})
  embeddings: [{kind: sentence_transformers, model, backend: torch|onnx|onnx-int8, device, batch_size,
                query_prefix, text_prefix, name} | {kind: openai, model, base_url, api_key_env, ...}]
  retrievers: [{kind: bm25|vector|fusion, mode, weights (a list or tune), tune_steps, tune_metric, num_queries, name}
               | {kind: knowledge_graph|hybrid_kg, store: simple|neo4j,
                  extractor: legal_patterns|llm_simple|llm_dynamic, max_triplets_per_chunk,
                  max_keywords, path_depth, max_triplets, weights (hybrid_kg), name}]
  top_k: [3, 5, 10]
  query_transforms: [{kind: none|rm3, fb_docs, fb_terms, original_weight, max_df, apply_to, name}
                     | {kind: hyde, include_original} | {kind: multi_query, num_queries}
                     | {kind: decompose, max_subquestions} (these three need llm; apply_to, name)]
  rerankers: [{kind: none|late_interaction|cross_encoder|llm, candidates, apply_to, name, model, ...}]
  adaptive: [{name, retriever (label), labels: {CLASS: [question types]}, labels_file, default_class,
              classes: {CLASS: {top_k, reranker (label|none), query_transform (label|none)}},
              classifier: {folds, C, ngram_max, min_df, class_weight: balanced|none}}]
  postprocessors: [{kind: none} | {kind: similarity_cutoff, cutoff, mode: absolute|relative}
                   | {kind: long_context_reorder} | {kind: sentence_window} | {kind: auto_merging, ratio}
                   (apply_to, name)]
  vector_store: {path | url}
  executor: local|ray
  ray: {address, questions_per_task, num_cpus}
  neo4j: {url, username_env, password_env, database, timeout}
  generator: {kind: extractive, max_sentences, abstain_below: X|tune}
             | {kind: llm, response_mode, prompt_file | prompt_files: [a.txt, ...] (an axis), refusal}
  llm: {model, base_url, api_key_env, temperature, seed, max_tokens, timeout, context_window,
        concurrency, adaptive_concurrency, requests_per_minute, tokens_per_minute, max_retries, max_backoff}
  prices: {MODEL: {input: USD per 1M tokens, output: USD per 1M tokens}}
  split: {validation_fraction, stratify}
  stage2: {judges: list of correctness|faithfulness|relevancy, llm, select_metric, top_n, max_configs,
           alpha, correctness_threshold, prompts: {correctness, faithfulness, relevancy, ...}}
  scoring: {bertscore: {model, num_layers, batch_size, baseline, baseline_pairs, device},
            bootstrap_samples, confidence, metric (the verdict's), alpha}
  search: grid|random|greedy|tpe|nsga2|auto or {strategy, budget: {trials, fraction, seconds, usd}, seed,
           objectives: [quality, latency, cost], metric, order: plan|models_first, finalists, batch,
           cost_aware, racing: true | {first, growth, minimum, alpha, family}}
  generate: {generator: offline|llm, questions, mix: {TYPE: weight} (simple, complex, distracting, situational,
             double, conversational, complex_situational, out_of_scope, vague, comparative, rule_conclusion),
             methods: [definition, duty, ict], seed, near_duplicate, fuzzy_evidence, min_evidence_chars,
             passage_tokens, oversample, rounds, llm} (ragsweep generate)
"""
