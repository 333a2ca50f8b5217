# Browser-tier copy of torchweb's corpus program seungeunrho/minimalRL dqn.py: the vendored code below is
# unchanged but for the imports named here; the driver at the end sets formula weights
# and records forward, loss, gradients and optimizer steps (tests/test_corpus.py runs
# the same program natively).
# In this copy `import gym` is dropped (no environment is used).
# From https://github.com/seungeunrho/minimalRL @ c8efed8, dqn.py
# License: MIT, Copyright (c) 2019 seungeunrho (full text in tests/corpus/LICENSES.md).

import collections
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

#Hyperparameters
learning_rate = 0.0005
gamma         = 0.98
buffer_limit  = 50000
batch_size    = 32

class ReplayBuffer():
    def __init__(self):
        self.buffer = collections.deque(maxlen=buffer_limit)
    
    def put(self, transition):
        self.buffer.append(transition)
    
    def sample(self, n):
        mini_batch = random.sample(self.buffer, n)
        s_lst, a_lst, r_lst, s_prime_lst, done_mask_lst = [], [], [], [], []
        
        for transition in mini_batch:
            s, a, r, s_prime, done_mask = transition
            s_lst.append(s)
            a_lst.append([a])
            r_lst.append([r])
            s_prime_lst.append(s_prime)
            done_mask_lst.append([done_mask])

        return torch.tensor(s_lst, dtype=torch.float), torch.tensor(a_lst), \
               torch.tensor(r_lst), torch.tensor(s_prime_lst, dtype=torch.float), \
               torch.tensor(done_mask_lst)
    
    def size(self):
        return len(self.buffer)

class Qnet(nn.Module):
    def __init__(self):
        super(Qnet, self).__init__()
        self.fc1 = nn.Linear(4, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x
      
    def sample_action(self, obs, epsilon):
        out = self.forward(obs)
        coin = random.random()
        if coin < epsilon:
            return random.randint(0,1)
        else : 
            return out.argmax().item()
            
def train(q, q_target, memory, optimizer):
    for i in range(10):
        s,a,r,s_prime,done_mask = memory.sample(batch_size)

        q_out = q(s)
        q_a = q_out.gather(1,a)
        max_q_prime = q_target(s_prime).max(1)[0].unsqueeze(1)
        target = r + gamma * max_q_prime * done_mask
        loss = F.smooth_l1_loss(q_a, target)
        
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def main():
    env = gym.make('CartPole-v1')
    q = Qnet()
    q_target = Qnet()
    q_target.load_state_dict(q.state_dict())
    memory = ReplayBuffer()

    print_interval = 20
    score = 0.0  
    optimizer = optim.Adam(q.parameters(), lr=learning_rate)

    for n_epi in range(10000):
        epsilon = max(0.01, 0.08 - 0.01*(n_epi/200)) #Linear annealing from 8% to 1%
        s, _ = env.reset()
        done = False

        while not done:
            a = q.sample_action(torch.from_numpy(s).float(), epsilon)      
            s_prime, r, done, truncated, info = env.step(a)
            done_mask = 0.0 if done else 1.0
            memory.put((s,a,r/100.0,s_prime, done_mask))
            s = s_prime

            score += r
            if done:
                break
            
        if memory.size()>2000:
            train(q, q_target, memory, optimizer)

        if n_epi%print_interval==0 and n_epi!=0:
            q_target.load_state_dict(q.state_dict())
            print("n_episode :{}, score : {:.1f}, n_buffer : {}, eps : {:.1f}%".format(
                                                            n_epi, score/print_interval, memory.size(), epsilon*100))
            score = 0.0
    env.close()

if __name__ == '__main__':
    main()


# -- driver (torchweb's corpus, browser tier): weights and inputs from formulas, no random draws --
import math as _math

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def _values(n, k=0, scale=1.0):
    return [_math.sin(0.7 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=1.0):
    return torch.tensor(_values(_math.prod(shape), k, scale)).reshape(shape).to(device)


def set_weights(m, k=0):
    """Every parameter from a formula, scaled by 1/sqrt(fan-in) (biases 0.1)."""
    with torch.no_grad():
        for i, (name, p) in enumerate(m.named_parameters()):
            fan_in = p.numel() // p.shape[0] if p.dim() > 1 else 100
            p.copy_(x_of(tuple(p.shape), k + i, 1.0 / _math.sqrt(fan_in)))


def rounded(t):
    return [round(v, 6) for v in t.detach().reshape(-1).tolist()]


result = {}
q, q_target = Qnet().to(device), Qnet().to(device)
set_weights(q, 3)
q_target.load_state_dict(q.state_dict())
memory = ReplayBuffer()
for i in range(48):
    s = [_math.sin(0.3 * i + k) for k in range(4)]
    s_prime = [_math.sin(0.3 * i + 0.3 + k) for k in range(4)]
    memory.put((s, i % 2, 0.01 * (i % 5), s_prime, 0.0 if i % 7 == 6 else 1.0))
random.seed(0)                     # the minibatches: Python's random, the same in both runs
optimizer = optim.Adam(q.parameters(), lr=learning_rate)
train(q, q_target, memory, optimizer)
obs = torch.tensor([0.1, -0.2, 0.3, 0.05])
result["q"] = rounded(q(obs))
result["actions"] = [q.sample_action(obs, 0.5) for _ in range(6)]
result["fc1"] = rounded(q.fc1.weight)[:16]
