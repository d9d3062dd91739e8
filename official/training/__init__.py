"""Training machinery shared by every entry point that trains.

    optimization       the original AdamWeightDecay, LAMB, and the warmup + linear-decay schedule
    pretraining_input  tf.data pipeline over the pretraining TFRecords (optional dynamic masking)
    distribution       the tf.distribute strategy a `--distribution_strategy` flag names
    trainer            the custom training loop: strategy, accumulation, checkpoints, progress
"""
