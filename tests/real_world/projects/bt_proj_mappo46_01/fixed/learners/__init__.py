from learners.ppo_learner import PPOLearner
