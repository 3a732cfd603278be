from ppo.agent import PPO
