"""Parameter-efficient fine-tuning: Houlsby adapters and LoRA on a frozen encoder.

    settings    PeftSettings: the method and its sizes, from the fine-tuning flags
    methods     apply(model, settings): what is inserted, what trains
    artifact    a run's record (peft_config.json: base fingerprint, task) and loading its base
    adaptation  the fine-tuning run's adapt hook, and reconciling flags with an output_dir
    merging     LoRA folded into the base's matrices (exports, convert_checkpoint)

The layers themselves are official/modeling/adapter.py and lora.py; the checkpoints of a PEFT
run (its trained variables alone) are official/checkpoints/training.py's.
"""
